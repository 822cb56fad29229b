// Package safefile reads files that may be untrusted input (a pull
// request's wave file, its var files, a state or plan file handed over) with
// bounds: only regular files, never under /proc, /sys or /dev, at most a
// given size, and never blocking on a named pipe. A wave file planned in CI
// is attacker-controlled, and git stores symbolic links, so a committed
// wave.hcl may point at /dev/zero (unbounded memory), a FIFO (a hang) or
// /proc/self/environ (the runner's secrets in a diagnostic snippet).
//
// It imports nothing of cadence's: spec, internal/state and internal/cli
// all read through it.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrRefused is wrapped by every error that refuses a file for what it is
// (not a regular file, a system file, too large, outside its root), as
// opposed to an error reading it.
var ErrRefused = errors.New("refused")

// systemDirs are the folders whose files are never read: their "files" are
// kernel interfaces (environ, devices) rather than content.
var systemDirs = []string{"/proc", "/sys", "/dev"}

// Within reports whether p is root or a path under it (both clean and
// absolute, or both relative to the same folder).
func Within(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// System returns the system folder (/proc, /sys or /dev) that holds the
// resolved path real, or "".
func System(real string) string {
	for _, sys := range systemDirs {
		if Within(sys, real) {
			return sys
		}
	}
	return ""
}

// Refusal is the error for a file refused for what it is.
type Refusal struct {
	Path   string // the path as given
	Reason string // "is a named pipe", "is larger than 1048576 bytes", …
}

func (r *Refusal) Error() string { return r.Path + " " + r.Reason }

// Unwrap makes errors.Is(err, ErrRefused) true.
func (r *Refusal) Unwrap() error { return ErrRefused }

// Kind returns what a file of mode m is when it is not a regular file
// ("a folder", "a named pipe", "a device", "a socket", "not a regular
// file"), or "" for a regular file.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// Check returns a *Refusal when st is not a regular file of at most max
// bytes (max <= 0: no limit), else nil. path names the file in the error.
func Check(path string, st fs.FileInfo, max int64) error {
	if k := Kind(st.Mode()); k != "" {
		return &Refusal{path, "is " + k + ", not a regular file"}
	}
	if max > 0 && st.Size() > max {
		return &Refusal{path, fmt.Sprintf("is larger than %d bytes, the most cadence reads of it", max)}
	}
	return nil
}

// Read reads the file at path, following symbolic links, when it is a
// regular file of at most max bytes outside /proc, /sys and /dev. The
// checks run before the file is opened (a FIFO never blocks), again on the
// open file (it may have been swapped), and on the bytes read (it may have
// grown). Errors: *fs.PathError (errors.Is fs.ErrNotExist when missing),
// or a *Refusal (errors.Is ErrRefused).
func Read(path string, max int64) ([]byte, error) {
	return ReadWithin("", path, max)
}

// ReadWithin is Read, and also refuses path when root is not "" and the
// file, with every symbolic link resolved, is not inside root (a folder,
// resolved by the caller).
func ReadWithin(root, path string, max int64) ([]byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(real); err == nil {
		real = abs
	}
	if sys := System(real); sys != "" {
		return nil, &Refusal{path, fmt.Sprintf("resolves to %s, a system file under %s", real, sys)}
	}
	if root != "" && !Within(root, real) {
		how := "is"
		if real != path {
			how = "resolves to " + real + ","
		}
		return nil, &Refusal{path, fmt.Sprintf("%s outside %s", how, root)}
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if err := Check(path, st, max); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the file have become a FIFO since Stat, open does
	// not wait for a writer; the Fstat below refuses it.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := Check(path, st, max); err != nil {
		return nil, err
	}
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if max > 0 && int64(len(b)) > max {
		return nil, &Refusal{path, fmt.Sprintf("is larger than %d bytes, the most cadence reads of it", max)}
	}
	return b, nil
}
