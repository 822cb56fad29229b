package spec

import (
	"fmt"
	"path"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Submodules says whether a new lot worktree gets its repository's
// submodules checked out.
type Submodules int

const (
	// SubmodulesAuto checks them out when the worktree has a .gitmodules
	// (the base's, as the worktree is made from it): the default.
	SubmodulesAuto Submodules = iota
	// SubmodulesOn is `submodules = true`.
	SubmodulesOn
	// SubmodulesOff is `submodules = false`: submodule folders stay empty.
	SubmodulesOff
)

// String returns "auto", "on" or "off".
func (s Submodules) String() string {
	return [...]string{"auto", "on", "off"}[s]
}

// MaxCopyBytes is the most bytes a file listed in copy may have: copy is
// for small local files (.env, a local configuration), not for data.
const MaxCopyBytes = 1 << 20

// Bootstrap is what a new lot worktree of one repository gets before the
// lot's first step (executor/bootstrap.go): its submodules, files copied
// from the lead's checkout, then a setup command. The zero value gets
// nothing but the submodules of a repository that has some.
type Bootstrap struct {
	// Submodules is the submodules attribute (SubmodulesAuto unset).
	Submodules Submodules
	// Copy are the files copied from the repository's folder (the lead's
	// checkout) into the worktree, never committed: slash-separated paths
	// relative to the repository's root, cleaned, in the order written.
	// Each stays inside the repository (neither absolute nor "..") and
	// outside its .git; the planner checks the rest (a regular file, at
	// most MaxCopyBytes, untracked in the base, ignored by git).
	Copy []string
	// Setup is the shell command run in the worktree after the submodules
	// and the copies, once per worktree ("" for none).
	Setup string
}

// Empty reports whether b asks for nothing but the default submodules.
func (b Bootstrap) Empty() bool {
	return b.Submodules == SubmodulesAuto && len(b.Copy) == 0 && b.Setup == ""
}

// bootstrapAttrs are the attributes of a repo, and of a lot over its
// repo's, that make Bootstrap.
var bootstrapAttrs = []hcl.AttributeSchema{{Name: "submodules"}, {Name: "copy"}, {Name: "setup"}}

// decodeBootstrap reads submodules, copy and setup of one block (what
// names it in messages: "repo \"api\"", "lot \"a\""); set says which of
// them were written, by attribute name.
func (d *decoder) decodeBootstrap(attrs hcl.Attributes, what string) (b Bootstrap, set map[string]bool) {
	set = map[string]bool{}
	if on, ok := d.boolean(attrs["submodules"]); ok {
		b.Submodules, set["submodules"] = SubmodulesOff, true
		if on {
			b.Submodules = SubmodulesOn
		}
	}
	if a := attrs["copy"]; a != nil {
		if list, ok := d.strList(a); ok {
			set["copy"] = true
			seen := map[string]bool{}
			for _, p := range list {
				clean, why := copyPathProblem(p)
				switch {
				case why != "":
					d.invalid(a, "Invalid copy path", "copy of %s: %q %s.", what, p, why)
				case seen[clean]:
					d.invalid(a, "Duplicate copy path", "copy of %s lists %q twice.", what, clean)
				default:
					seen[clean] = true
					b.Copy = append(b.Copy, clean)
				}
			}
		}
	}
	if s, ok := d.str(attrs["setup"]); ok {
		b.Setup, set["setup"] = commandLineEnds(s), true
		d.warnLongCommand(attrs["setup"], fmt.Sprintf("The setup of %s", what), b.Setup)
	}
	return b, set
}

// copyPathProblem cleans a copy entry and says why it cannot be one (""
// when it can): it must name a file inside the repository, outside .git.
func copyPathProblem(p string) (string, string) {
	switch {
	case p == "":
		return "", "is empty"
	case strings.ContainsRune(p, 0):
		return "", "holds a NUL byte"
	case strings.Contains(p, `\`):
		return "", `holds a backslash: write paths with "/"`
	case path.IsAbs(p):
		return "", "is absolute: copy takes paths relative to the repository's root"
	}
	clean := path.Clean(p)
	first, _, _ := strings.Cut(clean, "/")
	switch {
	case clean == ".":
		return "", "names the repository itself, not a file"
	case first == "..":
		return "", "leaves the repository (\"..\")"
	case strings.EqualFold(first, ".git"):
		return "", "is inside .git"
	}
	return clean, ""
}

// lotBootstrap is a lot's own Bootstrap and which of its attributes the
// lot wrote.
type lotBootstrap struct {
	b   Bootstrap
	set map[string]bool
}

// mergeBootstraps fills every lot's Bootstrap: its repository's, with
// each attribute the lot sets replacing the repository's. A setup the
// lot takes from a repository whose setup is sensitive is sensitive too.
func (d *decoder) mergeBootstraps() {
	for _, l := range d.cfg.Lots {
		own, set := d.lotBoot[l].b, d.lotBoot[l].set
		if l.Repo == nil {
			for _, a := range bootstrapAttrs {
				if attr := d.lotAttrs[l][a.Name]; attr != nil {
					d.errorf(attr.NameRange, "Not for a lot without a repo", "%q sets up a lot's worktree; lot %q has no repo, so no worktree.", a.Name, l.ID)
				}
			}
			continue
		}
		b := l.Repo.Bootstrap
		if set["submodules"] {
			b.Submodules = own.Submodules
		}
		if set["copy"] {
			b.Copy = own.Copy
		}
		if set["setup"] {
			b.Setup = own.Setup
		} else if l.Repo.Sensitive.Has("setup") {
			l.Sensitive = l.Sensitive.add("setup")
		}
		l.Bootstrap = b
	}
}
