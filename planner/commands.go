package planner

import (
	"fmt"

	"github.com/cadence-run/cadence/spec"
)

// longCommands warns about the commands apply would run that are too long
// to start: a pending command lot's run, and the test of a repository a
// pending lot uses (used). cadence runs each as one argument of /bin/sh
// -c, and Linux refuses an argument of spec.MaxArgBytes bytes or more
// ("argument list too long"). How commands run does not change; the
// warning says what to do instead.
func (b *builder) longCommands(used map[*spec.Repo]bool) {
	const fix = "put the command in a script file and run that (sh script.sh)"
	for _, l := range b.selected {
		if l.Kind != spec.CommandLot || !b.actions[l].Action.Pending() || !spec.CommandTooLong(l.Run) {
			continue
		}
		b.warn(Warning{Kind: WarnLongCommand, Subject: l.ID, LotIDs: []string{l.ID}, Message: fmt.Sprintf(
			"lot %s: its run command is %s bytes, more than one argument may have (%s bytes on Linux): it would fail with \"argument list too long\"; %s",
			l.ID, thousands(len(l.Run)), thousands(spec.MaxArgBytes-1), fix)})
	}
	for _, r := range b.cfg.Repos {
		if !used[r] || !spec.CommandTooLong(r.Test) {
			continue
		}
		b.warn(Warning{Kind: WarnLongCommand, Subject: r.Name, Message: fmt.Sprintf(
			"repo %s: its test command is %s bytes, more than one argument may have (%s bytes on Linux): every test gate would fail with \"argument list too long\"; %s",
			r.Name, thousands(len(r.Test)), thousands(spec.MaxArgBytes-1), fix)})
	}
}

// thousands renders n with comma separators: 131,071.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
