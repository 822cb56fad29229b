package gitint

import (
	"context"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// maxStatusEntries bounds what CheckoutStatus keeps of a status.
const maxStatusEntries = 10000

// CheckoutStatus is the status of a checkout: path → its entry of `git
// status --porcelain=v2 -z --untracked-files=all` (tracked changes with
// their index and HEAD objects, untracked files; ignored paths left out),
// at most maxStatusEntries of them.
type CheckoutStatus map[string]string

// ReadCheckoutStatus reads the status of the checkout at dir (cadence's
// own git: no hook, no optional lock, so the index is not rewritten). The
// error is git's.
func (g Git) ReadCheckoutStatus(ctx context.Context, dir string) (CheckoutStatus, error) {
	out, err := g.Run(ctx, dir, "status", "--porcelain=v2", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	st := CheckoutStatus{}
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields) && len(st) < maxStatusEntries; i++ {
		e := fields[i]
		var path string
		switch {
		case strings.HasPrefix(e, "1 "):
			path = nthField(e, 8)
		case strings.HasPrefix(e, "2 "):
			path = nthField(e, 9)
			i++ // the original path follows
		case strings.HasPrefix(e, "u "):
			path = nthField(e, 10)
		case strings.HasPrefix(e, "? "):
			path = e[2:]
		default:
			continue
		}
		if path != "" {
			st[path] = e
		}
	}
	return st, nil
}

// nthField is what follows the n-th space of an entry (the path, which may
// hold spaces), "" when there are fewer.
func nthField(e string, n int) string {
	for k := 0; k < n; k++ {
		i := strings.IndexByte(e, ' ')
		if i < 0 {
			return ""
		}
		e = e[i+1:]
	}
	return e
}

// CheckoutChange is a path whose status changed, and how: "added to the
// index", "modified", "deleted", "untracked", "no longer changed", ...
type CheckoutChange struct {
	Path, How string
}

// Changes lists the paths whose entry differs from before to after,
// sorted by path; an untracked editor's scratch file (editorScratch) that
// appears or goes is none.
func (before CheckoutStatus) Changes(after CheckoutStatus) []CheckoutChange {
	var out []CheckoutChange
	for p, e := range after {
		if before[p] != e && !(strings.HasPrefix(e, "? ") && editorScratch(p)) {
			out = append(out, CheckoutChange{p, describeEntry(e)})
		}
	}
	for p, e := range before {
		if _, ok := after[p]; !ok && !(strings.HasPrefix(e, "? ") && editorScratch(p)) {
			out = append(out, CheckoutChange{p, "no longer changed"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// describeEntry says in words what a status entry shows.
func describeEntry(e string) string {
	if strings.HasPrefix(e, "? ") {
		return "untracked"
	}
	if strings.HasPrefix(e, "u ") {
		return "unmerged"
	}
	if len(e) < 4 {
		return "changed"
	}
	x, y := e[2], e[3]
	var what []string
	switch x {
	case 'A':
		what = append(what, "added to the index")
	case 'M':
		what = append(what, "modified in the index")
	case 'D':
		what = append(what, "deleted in the index")
	case 'R':
		what = append(what, "renamed in the index")
	}
	switch y {
	case 'M':
		what = append(what, "modified")
	case 'D':
		what = append(what, "deleted")
	}
	if len(what) == 0 {
		return "changed"
	}
	return strings.Join(what, ", ")
}

// CheckoutStatus implements the executor's view: the status of the
// repository's checkout (the lead's, at repo.Path).
func (g *Repos) CheckoutStatus(ctx context.Context, repo *spec.Repo) (CheckoutStatus, error) {
	return g.ReadCheckoutStatus(ctx, repo.Path)
}

// editorScratch says whether path names a file editors write beside the
// file being edited while it is open or saved: vim's swap files (.swp,
// .swo, .swn, .swx) and its write probe "4913", backups ending in "~",
// Emacs' lock (.#name) and auto-save (#name#) files, Kate's .kate-swp and
// JetBrains' ___jb_tmp___/___jb_old___ files. The lead editing a file of
// their checkout while a step runs is not the step's change.
func editorScratch(path string) bool {
	name := filepath.Base(path)
	for _, suf := range []string{".swp", ".swo", ".swn", ".swx", ".kate-swp", "~", "___jb_tmp___", "___jb_old___"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return name == "4913" || strings.HasPrefix(name, ".#") || len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#")
}
