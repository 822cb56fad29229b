package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// MaxFileBytes is the largest file file() and templatefile() read: 1 MiB.
// A wave file is untrusted input in CI (a pull request's plan is posted
// publicly), so reading is bounded: a brief or a run script is a few
// kilobytes, and a larger file is refused with a diagnostic.
const MaxFileBytes = 1 << 20

// readRoot returns the folder tree file() may read from for a wave file in
// dir: the top of the git work tree that contains dir (the nearest folder
// upwards that has a .git entry, found without running git), else dir
// itself. Symbolic links in dir are resolved first.
func readRoot(dir string) string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	for d := real; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return real
		}
		d = up
	}
}

// within reports whether p is root or a path under it (both cleaned).
func within(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// readRelative reads the text file name, relative to the wave file's folder
// dir, for file() and templatefile(). The rules, for untrusted wave files:
// the path, after resolving every symbolic link, must be inside readRoot(dir)
// and not under /proc, /sys or /dev (even for a wave file at /);
// it must be a regular file (no folder, device, named pipe or socket: these
// are refused before they are opened, so a FIFO cannot hang plan); it must
// be at most MaxFileBytes and UTF-8. Each broken rule is an error naming it.
// A file read is recorded in rec (nil: not), for a saved plan.
func readRelative(dir, name string, rec *readRecorder) (string, error) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	root := readRoot(dir)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("no file %s (paths are relative to the wave file's folder)", p)
		}
		return "", err
	}
	for _, sys := range []string{"/proc", "/sys", "/dev"} {
		if within(sys, real) {
			return "", fmt.Errorf("%s is a system file (under %s): file() and templatefile() read only files inside the wave file's folder tree or the git work tree that holds it", p, sys)
		}
	}
	if !within(root, real) {
		how := p + " is"
		if real != p {
			how = fmt.Sprintf("%s resolves to %s,", p, real)
		}
		return "", fmt.Errorf("%s outside %s: file() and templatefile() read only files inside the wave file's folder tree or the git work tree that holds it", how, root)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if err := regular(p, st); err != nil {
		return "", err
	}
	// O_NONBLOCK: should the file have become a FIFO since Stat, open
	// does not wait for a writer; Fstat below refuses it.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return "", err
	}
	if err := regular(p, st); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxFileBytes {
		return "", tooBig(p)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%s is not UTF-8 text", p)
	}
	rec.file(p, b)
	return string(b), nil
}

func tooBig(p string) error {
	return fmt.Errorf("%s is larger than %d bytes (1 MiB), the most file() and templatefile() read", p, MaxFileBytes)
}

// regular refuses what is not a regular file of at most MaxFileBytes.
func regular(p string, st fs.FileInfo) error {
	m := st.Mode()
	var what string
	switch {
	case m.IsRegular():
		if st.Size() > MaxFileBytes {
			return tooBig(p)
		}
		return nil
	case m.IsDir():
		what = "a folder"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	default:
		what = "not a regular file"
	}
	return fmt.Errorf("%s is %s: file() and templatefile() read only regular files", p, what)
}
