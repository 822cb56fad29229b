package gitint

import "strings"

// StatusV2 is what `git status --porcelain=v2 --branch -z` says of a
// worktree (git-status(1), "Porcelain Format Version 2"): the branch
// checked out as a ref ("refs/heads/x"; "" when HEAD is detached), its
// commit, the paths of the tracked entries with changes (1, 2 — its new
// path — and u), and those of the untracked (?) and ignored (!) entries
// the status was asked to list.
type StatusV2 struct {
	Head, OID string
	Changed   []string
	Untracked []string
}

// Paths are every entry's path: Changed, then Untracked.
func (s StatusV2) Paths() []string {
	return append(append([]string{}, s.Changed...), s.Untracked...)
}

// ParseStatusV2 reads the -z output of `git status --porcelain=v2
// --branch`. Entries it cannot read are left out.
func ParseStatusV2(out string) StatusV2 {
	var s StatusV2
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		e := fields[i]
		switch {
		case strings.HasPrefix(e, "# branch.oid "):
			s.OID = strings.TrimPrefix(e, "# branch.oid ")
		case strings.HasPrefix(e, "# branch.head "):
			if h := strings.TrimPrefix(e, "# branch.head "); h != "(detached)" {
				s.Head = "refs/heads/" + h
			}
		case strings.HasPrefix(e, "1 "):
			if f := strings.SplitN(e, " ", 9); len(f) == 9 {
				s.Changed = append(s.Changed, f[8])
			}
		case strings.HasPrefix(e, "2 "):
			if f := strings.SplitN(e, " ", 10); len(f) == 10 {
				s.Changed = append(s.Changed, f[9])
			}
			i++ // the source path follows
		case strings.HasPrefix(e, "u "):
			if f := strings.SplitN(e, " ", 11); len(f) == 11 {
				s.Changed = append(s.Changed, f[10])
			}
		case strings.HasPrefix(e, "? "), strings.HasPrefix(e, "! "):
			s.Untracked = append(s.Untracked, e[2:])
		}
	}
	return s
}
