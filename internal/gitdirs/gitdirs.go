// Package gitdirs finds a worktree's git dirs from its files, without a
// git process: what a sandbox must make writable for git to commit there,
// read by the step box and by the agent adapters' sandbox settings.
package gitdirs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Read returns the git dir of the worktree wt and the common dir of its
// repository, absolute with their symbolic links resolved: for a linked
// worktree (wt/.git a file "gitdir: <own>"), its own git dir and the
// common dir its commondir file names (relative to <own>; the git dir
// itself without one); for a main worktree (wt/.git a folder), that
// folder twice. wt/.git that is a symbolic link, or a file without a
// gitdir line, is an error: it is not followed.
func Read(wt string) (own, common string, err error) {
	dotgit := filepath.Join(wt, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return "", "", err
	}
	if fi.IsDir() {
		d := Real(dotgit)
		return d, d, nil
	}
	if !fi.Mode().IsRegular() {
		return "", "", fmt.Errorf("%s is neither a folder nor a git file", dotgit)
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return "", "", err
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	line = strings.TrimSpace(line)
	if !ok || line == "" {
		return "", "", fmt.Errorf("%s is not a git file (no gitdir: line)", dotgit)
	}
	if !filepath.IsAbs(line) {
		line = filepath.Join(wt, line)
	}
	own = Real(line)
	common = own
	if c, err := os.ReadFile(filepath.Join(own, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(own, cd)
		}
		common = Real(cd)
	}
	return own, common, nil
}

// Real is p made absolute with its symbolic links resolved, or absolute
// and clean when they cannot be.
func Real(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
