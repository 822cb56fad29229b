package planner

import (
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// CopyMachine is a Machine that also checks the copy files of a
// repository against the lead's checkout and the base (gitint.CheckCopy):
// without it (and offline) they are not checked.
type CopyMachine interface {
	Machine
	// CheckCopy returns the entries of copies that cannot be copied into
	// r's lot worktrees, each with why.
	CheckCopy(r *spec.Repo, copies []string) ([]CopyProblem, error)
}

// CopyProblem is a copy entry that cannot be copied, and why ("is
// tracked in the base main: …", "is not ignored by git: …").
type CopyProblem struct {
	Path, Problem string
}

// Bootstrap is what one of a lot's worktrees gets before its first step
// (spec.Bootstrap), as a plan shows it.
type Bootstrap struct {
	// Repo names the worktree's repository.
	Repo string
	// Submodules is "on" (submodules = true, or the default and a base
	// with a .gitmodules), "off" (submodules = false), "" for the default
	// and a base without one (or offline, where the base is not read).
	Submodules string
	// Copy are the files copied from the lead's checkout.
	Copy []string
	// Setup is the setup command ("" for none; spec.Redacted when
	// sensitive).
	Setup string
}

// bootstraps is what the lot's worktrees get, the own repository's
// first; only those that get something (nil for none). gitmodules says
// per repository whether its base has a .gitmodules (nil offline).
func bootstraps(l *spec.Lot, gitmodules map[*spec.Repo]bool) []Bootstrap {
	if l.Repo == nil {
		return nil
	}
	var out []Bootstrap
	for _, rp := range l.Repos() {
		b, sens := rp.Bootstrap, rp.Sensitive
		if rp == l.Repo {
			b, sens = l.Bootstrap, l.Sensitive
		}
		bp := Bootstrap{Repo: rp.Name, Submodules: submodulesShown(b.Submodules, rp, gitmodules),
			Copy: b.Copy, Setup: sens.Show("setup", b.Setup)}
		if b.Setup == "" {
			bp.Setup = ""
		}
		if bp.Submodules != "" || len(bp.Copy) > 0 || bp.Setup != "" {
			out = append(out, bp)
		}
	}
	return out
}

// submodulesShown is a repository's submodules setting as a plan shows
// it: "on" when set, or under the default when its base has a
// .gitmodules (unknown offline: not shown); "off" when set off.
func submodulesShown(s spec.Submodules, rp *spec.Repo, gitmodules map[*spec.Repo]bool) string {
	switch {
	case s == spec.SubmodulesOff:
		return "off"
	case s == spec.SubmodulesOn || gitmodules[rp]:
		return "on"
	}
	return ""
}

// checkCopies checks, with a CopyMachine, the copy files of the pending
// lots' worktrees: each one that cannot be copied is an error naming the
// file, pointing at the block that lists it (the lot's when it sets copy,
// else the repository's). Each repository's list is checked once.
func (b *builder) checkCopies(m Machine) {
	cm, ok := m.(CopyMachine)
	if !ok {
		return
	}
	type key struct {
		repo *spec.Repo
		list string
	}
	seen := map[key]bool{}
	for _, l := range b.selected {
		if l.Repo == nil || !b.actions[l].Action.Pending() {
			continue
		}
		for _, rp := range l.Repos() {
			copies, subject, who := rp.Bootstrap.Copy, rp.DeclRange, fmt.Sprintf("repo %q", rp.Name)
			if rp == l.Repo {
				copies = l.Bootstrap.Copy
				if !sameList(copies, rp.Bootstrap.Copy) {
					subject, who = l.DeclRange, fmt.Sprintf("lot %q", l.ID)
				}
			}
			k := key{rp, who + "\x00" + strings.Join(copies, "\x00")}
			if len(copies) == 0 || seen[k] {
				continue
			}
			seen[k] = true
			problems, err := cm.CheckCopy(rp, copies)
			if err != nil {
				b.diagAt(subject, "Cannot check the copy files", "copy of %s (repo %s): %v.", who, rp.Name, err)
				continue
			}
			for _, p := range problems {
				b.diagAt(subject, "Cannot copy a file into the worktrees", "copy of %s: %q of repo %s %s.", who, p.Path, rp.Name, p.Problem)
			}
		}
	}
}

// diagAt records an error diagnostic at rng.
func (b *builder) diagAt(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	b.diags = append(b.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
		Detail: fmt.Sprintf(format, args...), Subject: &r})
}

func sameList(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
