package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cadence-run/cadence/internal/safefile"
)

// MaxFileBytes is the largest file file() and templatefile() read: 1 MiB.
// A wave file is untrusted input in CI (a pull request's plan is posted
// publicly), so reading is bounded: a brief or a run script is a few
// kilobytes, and a larger file is refused with a diagnostic.
const MaxFileBytes = 1 << 20

// MaxWaveBytes is the largest wave file cadence reads: 16 MiB, half as
// much again as the planner's generated wave of 50,000 lots (11 MiB, each
// lot with a title, a brief, a budget, an estimate and dependencies). It
// bounds memory: a parsed and decoded wave holds about 90 bytes per byte
// of its file (1 GiB for that 50,000-lot wave), so 16 MiB is about
// 1.5 GiB. (Var files, auto-loaded or not, are read up to MaxFileBytes.)
const MaxWaveBytes = 16 << 20

// ReadWaveFile reads the wave file (or an auto-loaded var file beside it)
// at path, bounded as internal/safefile reads: a regular file of at most
// MaxWaveBytes, not under /proc, /sys or /dev. When path is a symbolic
// link, the file it resolves to must be inside ReadRoot of the link's own
// folder: git stores symbolic links, so a pull request could otherwise
// commit wave.hcl -> /etc/passwd and have its first line printed in a
// diagnostic snippet. Errors: fs.ErrNotExist when missing, or a refusal
// (errors.Is safefile.ErrRefused) that names the rule.
func ReadWaveFile(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	b, err := safefile.ReadWithin(readRoot(dir), path, MaxWaveBytes)
	if errors.Is(err, safefile.ErrRefused) {
		return nil, fmt.Errorf("%w: cadence reads wave and var files only when they are regular files of at most 16 MiB inside the folder tree or git work tree that holds them", err)
	}
	return b, err
}

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

// fileRule ends every refusal of file() and templatefile(): the rule, for
// untrusted wave files.
const fileRule = "file() and templatefile() read only regular files of at most 1 MiB inside the wave file's folder tree or the git work tree that holds it, never under .git"

// readRelative reads the text file name, relative to the wave file's folder
// dir, for file() and templatefile(). The rules, for untrusted wave files:
// the path, after resolving every symbolic link, must be inside readRoot(dir),
// not under a .git folder (checkout leaves the CI token in .git/config) and
// not under /proc, /sys or /dev (even for a wave file at /); it must be a
// regular file (no folder, device, named pipe or socket: these are refused
// before they are opened, so a FIFO cannot hang plan); it must be at most
// MaxFileBytes and UTF-8 (internal/safefile). Each broken rule is an error
// naming it. A file read is recorded in rec (nil: not), for a saved plan.
func readRelative(dir, name string, rec *readRecorder) (string, error) {
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "", fmt.Errorf("path %q has a control character: %s", name, fileRule)
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	root := readRoot(dir)
	// A path outside the tree as written is refused before anything is
	// looked up, so that the answer does not tell whether it exists.
	lexical := p
	if realDir, err := filepath.EvalSymlinks(dir); err == nil && !filepath.IsAbs(name) {
		lexical = filepath.Join(realDir, name)
	}
	if sys := safefile.System(lexical); sys != "" {
		return "", fmt.Errorf("%s is a system file under %s: %s", p, sys, fileRule)
	}
	if !safefile.Within(root, lexical) {
		return "", fmt.Errorf("%s is outside %s: %s", p, root, fileRule)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil && underGit(root, real) {
		return "", fmt.Errorf("%s is inside a .git folder: %s", p, fileRule)
	}
	b, err := safefile.ReadWithin(root, p, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no file %s (paths are relative to the wave file's folder)", p)
	}
	if errors.Is(err, safefile.ErrRefused) {
		return "", fmt.Errorf("%w: %s", err, fileRule)
	}
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%s is not UTF-8 text", p)
	}
	rec.file(p, b)
	return string(b), nil
}

// underGit reports whether real, inside root, has a path element named
// .git (a repository's git dir, or a worktree's .git file).
func underGit(root, real string) bool {
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return false
	}
	for _, e := range strings.Split(rel, string(filepath.Separator)) {
		if e == ".git" {
			return true
		}
	}
	return false
}

// templatesFolder checks the wave's brief templates folder (absolute): it
// must be a folder inside readRoot(dir), outside .git and the system
// folders, as file() reads (executor/briefs reads its *.tmpl files, each
// bounded by MaxFileBytes). A missing folder is an error, not an empty set
// of overrides: a mistyped path would otherwise silently use the built-in
// briefs.
func templatesFolder(dir, path string) error {
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("there is no folder %s", path)
	}
	if err != nil {
		return err
	}
	root := readRoot(dir)
	switch st, err := os.Stat(real); {
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", path)
	case safefile.System(real) != "" || !safefile.Within(root, real) || underGit(root, real):
		return fmt.Errorf("%s is outside %s (or inside .git): templates are read only from the wave file's folder tree or the git work tree that holds it", path, root)
	}
	return nil
}
