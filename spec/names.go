package spec

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Names that become refs and folders. The wave's name and the lot ids name
// the lot branches, cadence/<wave>/<lot> (and cadence's backup and rescue
// refs, refs/cadence/…/<wave>/<lot>/<n>), and the folders of logs and
// worktrees (.cadence/<wave>/<lot>, the lot's worktree <lot>, its worktree
// of a neighbour repo <lot>@<repo>; internal/layout). So they are checked at
// validate by git's rules for ref names and by the file system's limit on a
// name's length, and apply never fails on a name. Repo names are HCL
// identifiers (letters, digits, '_' and '-'), which git always accepts; they
// count only in the length of <lot>@<repo>. spec checks in Go and never
// starts git.

// NameMax is the most bytes in one file name: 255 on ext4, XFS, btrfs, APFS
// (NAME_MAX) and NTFS (255 UTF-16 units, which a name of 255 bytes never
// exceeds).
const NameMax = 255

// NameReserve is the longest suffix git and cadence may append to a name
// cadence makes, in the same file name: the guard's entry of a lot
// worktree, <guard>/worktrees/<id>.config (gitint, ".config": 7 bytes),
// whose <id> is the worktree's <lot> or <lot>@<repo> with the number git
// appends when one of that name is already registered (up to 5 digits).
// Shorter ones are ".lock" while git updates a loose ref
// (refs/heads/cadence/<wave>/<lot>.lock) and git's number alone
// (.git/worktrees/<lot>1). A lot id and <lot>@<repo> have at most
// NameMax - NameReserve bytes.
const NameReserve = 5 + len(".config")

// WaveNameReserve is what cadence appends to a wave's name in one file
// name: the folder of the wave's worktrees is <wave>-<8 hex digits>
// (internal/layout's worktree key), and so is the folder of its lot
// branches beside another wave of its name (refs/heads/cadence/<wave>-<key>/,
// the planner's keyed namespace), so a wave name has at most
// NameMax - WaveNameReserve bytes.
const WaveNameReserve = 9

// RefNameError says why git refuses a ref name.
type RefNameError struct {
	// Ref is the name checked, as given.
	Ref string
	// Rule is the rule it breaks, as a phrase: `it contains ".."`.
	Rule string
}

func (e *RefNameError) Error() string {
	return fmt.Sprintf("git refuses %q as a ref name: %s", e.Ref, e.Rule)
}

// CheckRefName returns a *RefNameError when git refuses ref as a ref name,
// nil when it accepts it. The rules are git check-ref-format's without
// options (git-check-ref-format(1); refs.c, check_refname_format, git 2.39):
// no component is empty (no leading or trailing '/', no "//") or starts with
// '.' or ends with ".lock"; no "..", "@{", ASCII control character, space,
// '~', '^', ':', '?', '*', '[' or '\'; the name does not end with '.', is
// not "@", and has at least two components. Bytes from 0x80 up are allowed,
// as git allows them.
func CheckRefName(ref string) error {
	bad := func(rule string) error { return &RefNameError{Ref: ref, Rule: rule} }
	switch {
	case ref == "@":
		return bad(`it is "@"`)
	case ref == "":
		return bad("it is empty")
	case strings.HasPrefix(ref, "/"):
		return bad(`it starts with "/"`)
	case strings.HasSuffix(ref, "/"):
		return bad(`it ends with "/"`)
	case strings.Contains(ref, "//"):
		return bad(`it contains "//"`)
	}
	parts := strings.Split(ref, "/")
	for i, c := range parts {
		if rule := refComponentRule(c, i == len(parts)-1); rule != "" {
			return bad(rule)
		}
	}
	if len(parts) < 2 {
		return bad("it has one component only (git wants at least one '/')")
	}
	return nil
}

// refComponentRule returns the rule of git's that the ref name component c
// breaks ("" for none); last says whether c ends the ref name (which then
// must not end with '.'). The rules of a component are CheckRefName's: a
// name of components that each pass, joined by '/', passes CheckRefName
// when it has two components or more and is not "@".
func refComponentRule(c string, last bool) string {
	if c == "" {
		return "it is empty"
	}
	for i := 0; i < len(c); i++ {
		switch ch := c[i]; {
		case ch < 0x20 || ch == 0x7f:
			return fmt.Sprintf("it contains a control character (byte 0x%02x)", ch)
		case ch == ' ':
			return "it contains a space"
		case strings.IndexByte(`~^:?*[\`, ch) >= 0:
			return fmt.Sprintf("it contains %q", string(ch))
		case ch == '/':
			return `it contains "/"`
		case ch == '.' && i > 0 && c[i-1] == '.':
			return `it contains ".."`
		case ch == '{' && i > 0 && c[i-1] == '@':
			return `it contains "@{"`
		}
	}
	switch {
	case c[0] == '.':
		return `it starts with "."`
	case strings.HasSuffix(c, ".lock"):
		return `it ends with ".lock"`
	case last && strings.HasSuffix(c, "."):
		return `it ends with "."`
	}
	return ""
}

// nameKind is what a checked name is: "wave name" or "lot id".
type nameKind string

const (
	waveName nameKind = "wave name"
	lotName  nameKind = "lot id"
)

// checkName reports a wave name or lot id that git cannot put in the ref
// cadence/<wave>/<lot>, or that is too long for a file name, at rng (the
// block's label). It returns whether the name is usable. It runs after the
// IDPattern check, whose message stays first.
func (d *decoder) checkName(kind nameKind, name string, rng hcl.Range) bool {
	wave, lot, last := name, "<lot>", false
	if kind == lotName {
		wave, lot, last = d.cfg.Wave.Name, name, true
		if wave == "" {
			wave = "<wave>"
		}
	}
	if rule := refComponentRule(name, last); rule != "" {
		d.errorf(rng, "Invalid "+string(kind), "%s cannot name a git branch: the %s is part of the branch cadence/%s/%s, which git refuses: the %s %s (the rules of git check-ref-format).",
			quoteName(name), kind, wave, lot, kind, strings.TrimPrefix(rule, "it "))
		return false
	}
	reserve, files, who := NameReserve, "the guard's entry of its worktree, <id>.config, after the number git adds to a taken <id>", "git and cadence"
	if kind != lotName {
		reserve, files, who = WaveNameReserve, "the worktrees' folder <wave>-<key>", "cadence"
	}
	if n := len(name); n > NameMax-reserve {
		d.errorf(rng, capitalize(string(kind))+" too long", "%s is %d bytes; a %s names folders and files (the longest: %s), and a file name has at most %d bytes, %d of which %s may append: use at most %d.",
			quoteName(name), n, kind, files, NameMax, reserve, who, NameMax-reserve)
		return false
	}
	return true
}

// checkAlsoName reports a neighbour worktree's name, <lot>@<repo>, that is
// too long for a file name, at rng (the repo's reference in also).
func (d *decoder) checkAlsoName(l *Lot, repo string, rng hcl.Range) {
	name := l.ID + "@" + repo
	if n := len(name); n > NameMax-NameReserve {
		d.errorf(rng, "Worktree name too long", "Lot %s's worktree of repo %q is named <lot>@<repo>, %s, which is %d bytes; a file name has at most %d bytes, %d of which git and cadence may append (its guard entry <id>.config, after git's number): shorten the lot id or the repo name to %d bytes together.",
			quoteName(l.ID), repo, quoteName(name), n, NameMax, NameReserve, NameMax-NameReserve-1)
	}
}

// caseFold remembers names by their lower-case form, to warn about two that
// differ only in case: on a file system that ignores case (macOS and
// Windows by default) they name the same folder and the same loose ref.
type caseFold map[string]caseSeen

type caseSeen struct {
	name string
	rng  hcl.Range
}

// check warns when name differs only in case from a name seen before, and
// remembers it. what is "lot id" or "repo name".
func (f caseFold) check(d *decoder, what, name string, rng hcl.Range) {
	key := strings.ToLower(name)
	prev, ok := f[key]
	if !ok {
		f[key] = caseSeen{name, rng}
		return
	}
	if prev.name == name {
		return // a duplicate: an error of its own
	}
	r := rng
	d.values.diags = append(d.values.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  capitalize(what) + "s that differ only in case",
		Detail: fmt.Sprintf("%s and %s (declared at %s) differ only in case. On a file system that ignores case (macOS and Windows by default) they name the same folders and git branches, and the lots would overwrite each other's work: rename one.",
			quoteName(name), quoteName(prev.name), prev.rng.String()),
		Subject: &r,
	})
}

// quoteName quotes a name for a message, cut to 60 bytes with "…".
func quoteName(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q…", s[:57])
	}
	return fmt.Sprintf("%q", s)
}
