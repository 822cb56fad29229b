package gitint

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// unreleased finds the [Unreleased] section of a Keep-a-Changelog file: the
// lines after its heading up to the next heading of the same or a higher
// level. It returns the half-open line range [start, end), or ok=false.
func unreleased(lines []string) (start, end int, ok bool) {
	level := 0
	for i, l := range lines {
		t := strings.TrimSpace(l)
		h := strings.IndexFunc(t, func(r rune) bool { return r != '#' })
		if h <= 0 {
			continue
		}
		if level == 0 && strings.Contains(strings.ToLower(t[h:]), "[unreleased]") {
			level, start = h, i+1
			continue
		}
		if level > 0 && h <= level {
			return start, i, true
		}
	}
	if level > 0 {
		return start, len(lines), true
	}
	return 0, 0, false
}

// UnionChangelog merges two changes of a changelog made from one ancestor:
// ours must only add lines, all inside the ancestor's [Unreleased] section;
// theirs may add, rewrite or remove lines, all inside that section too (a
// later commit of a lot may rewrite the entry an earlier one added). The
// result is theirs with ours' added lines in their places (before theirs'
// own change where both touch one spot). ok=false when the changes are not
// of that kind: the conflict is a real one.
func UnionChangelog(ancestor, ours, theirs string) (string, bool) {
	a, o, t := splitLines(ancestor), splitLines(ours), splitLines(theirs)
	us, ue, found := unreleased(a)
	if !found {
		return "", false
	}
	// Ours: pure insertions, each at an ancestor position within the section.
	inserts := map[int][]string{} // ancestor index → lines inserted before it
	for _, op := range difflib.NewMatcher(a, o).GetOpCodes() {
		switch op.Tag {
		case 'e':
		case 'i':
			if op.I1 < us || op.I1 > ue {
				return "", false
			}
			inserts[op.I1] = append(inserts[op.I1], o[op.J1:op.J2]...)
		default:
			return "", false
		}
	}
	// Theirs: any change, inside the section.
	var out []string
	ai := 0 // next ancestor line not yet placed
	flush := func(upto int) {
		for ; ai < upto; ai++ {
			out = append(out, inserts[ai]...)
			out = append(out, a[ai])
		}
	}
	for _, op := range difflib.NewMatcher(a, t).GetOpCodes() {
		if op.Tag != 'e' && (op.I1 < us || op.I2 > ue) {
			return "", false
		}
		switch op.Tag {
		case 'e':
			flush(op.I2)
		case 'i':
			flush(op.I1)
			out = append(out, inserts[op.I1]...)
			delete(inserts, op.I1)
			out = append(out, t[op.J1:op.J2]...)
		case 'd', 'r':
			flush(op.I1)
			for k := op.I1; k < op.I2; k++ {
				out = append(out, inserts[k]...)
			}
			out = append(out, t[op.J1:op.J2]...)
			ai = op.I2
		}
	}
	flush(len(a))
	out = append(out, inserts[len(a)]...)
	return strings.Join(out, ""), true
}

// splitLines splits text into lines that keep their newlines.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
