package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// writableList is one block's sandbox_writable as written, kept with its
// attribute until every repository is known (checkSandboxWritable).
type writableList struct {
	attr  *hcl.Attribute
	what  string
	paths []string
}

// sandboxWritable reads the sandbox_writable attribute of one block (what
// names it in messages: "repo \"app\"", "lot \"a\""): each entry a folder,
// relative to the wave file's folder or absolute, returned absolute and
// clean without repeats. It is checked once every repository is decoded.
func (d *decoder) sandboxWritable(attrs hcl.Attributes, what string) []string {
	a := attrs["sandbox_writable"]
	if a == nil {
		return nil
	}
	list, ok := d.strList(a)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range list {
		if p == "" || strings.ContainsRune(p, 0) {
			d.invalid(a, "Invalid sandbox_writable folder", "sandbox_writable of %s: %q is not a folder's path (empty, or holds a NUL byte).", what, p)
			continue
		}
		if abs := d.abs(p); !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	d.writable = append(d.writable, writableList{attr: a, what: what, paths: out})
	return out
}

// checkSandboxWritable says, at its attribute, which sandbox_writable
// folder cannot be one: a path that does not exist or is no folder, one
// that holds or lies inside a repository's folder (the lead's checkout)
// or its git dir, or one inside the wave's .cadence folder. What else of
// cadence's such a folder holds (the state, its journal and requests, the
// cadence home, other lots' worktrees) stays read-only in the step
// sandbox (executor/step/box).
func (d *decoder) checkSandboxWritable() {
	type owned struct{ path, what string }
	var theirs []owned
	for _, r := range d.cfg.Repos {
		theirs = append(theirs, owned{realPath(r.Path), fmt.Sprintf("repo %q's folder (your checkout)", r.Name)})
		for _, g := range gitDirsOf(r.Path) {
			theirs = append(theirs, owned{g, fmt.Sprintf("repo %q's git dir", r.Name)})
		}
	}
	work := realPath(filepath.Join(d.cfg.Dir, ".cadence"))
	for _, w := range d.writable {
		for _, p := range w.paths {
			fi, err := os.Stat(p)
			switch {
			case err != nil:
				d.invalid(w.attr, "Invalid sandbox_writable folder", "sandbox_writable of %s: %s does not exist; make it first, or leave it out.", w.what, p)
				continue
			case !fi.IsDir():
				d.invalid(w.attr, "Invalid sandbox_writable folder", "sandbox_writable of %s: %s is not a folder.", w.what, p)
				continue
			}
			rp := realPath(p)
			if within(rp, work) {
				d.invalid(w.attr, "Invalid sandbox_writable folder", "sandbox_writable of %s: %s is inside the wave's .cadence folder, which is cadence's.", w.what, p)
				continue
			}
			for _, o := range theirs {
				switch {
				case within(o.path, rp):
					d.invalid(w.attr, "Invalid sandbox_writable folder", "sandbox_writable of %s: %s holds %s, which stays read-only in the step sandbox; name a folder beside it.", w.what, p, o.what)
				case within(rp, o.path):
					d.invalid(w.attr, "Invalid sandbox_writable folder", "sandbox_writable of %s: %s is inside %s, which stays read-only in the step sandbox; name a folder outside it.", w.what, p, o.what)
				default:
					continue
				}
				break
			}
		}
	}
}

// gitDirsOf are the git dir and common dir of the checkout at path (its
// .git folder, or the folders a .git file's gitdir: line and that git
// dir's commondir name), with symbolic links resolved; none when path
// has no readable .git.
func gitDirsOf(path string) []string {
	dotgit := filepath.Join(path, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		return []string{realPath(dotgit)}
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return nil
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || gd == "" {
		return nil
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(path, gd)
	}
	out := []string{realPath(gd)}
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		out = append(out, realPath(cd))
	}
	return out
}

// realPath is p with its symbolic links resolved (p, clean, when it
// cannot be).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within says p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// StepWritable are the folders the lot's command steps may also write in
// the step sandbox: its own sandbox_writable, then its repositories', each
// once (absolute).
func (l *Lot) StepWritable() []string {
	out := slices.Clone(l.SandboxWritable)
	for _, r := range l.Repos() {
		for _, p := range r.SandboxWritable {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}
