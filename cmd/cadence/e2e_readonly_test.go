//go:build unix

package main

import (
	"strings"
	"syscall"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// sneakCommit is a read-only session's commit past the CLI's deny rules
// (`git -C . commit` is not `git commit`), as a hostile agent without the
// sandbox can make it.
const sneakCommit = "echo sneak > sneak.txt && git -C . add sneak.txt && git -C . commit -qm 'a: sneak (a)'"

// TestE2EReadOnlyCommits: a read-only session (precheck, review) that
// commits anyway, without the sandbox, however it then ends — ok, a usage
// limit, cadence's SIGINT, cadence killed with -9 — hands the lot back
// untrusted, and its commit never reaches the base. Before, only a review
// that ended ok was checked: a precheck's commit, or a review's followed
// by a stop, was integrated by the next apply.
func TestE2EReadOnlyCommits(t *testing.T) {
	t.Parallel()
	fakeapi.FindCLI(t)
	cases := []struct {
		name    string
		scripts map[string]fakeapi.Script
		lot     string
		// stop, when set, stops the first apply once the sneaking
		// session's commit is made (its second request came).
		stop syscall.Signal
		// wantCause is in the lot's cause after the last apply.
		wantCause string
	}{
		{name: "precheck ends ok", lot: "  precheck = true", scripts: map[string]fakeapi.Script{
			"a-precheck0":  {fakeapi.Bash(sneakCommit), fakeapi.StructuredOutput(map[string]any{"already_done": false, "evidence": "nothing there"})},
			"a-implement0": implementScript(),
			"a-review0":    {review("conform")},
		}, wantCause: "the precheck session changed the lot's worktrees (HEAD moved)"},
		{name: "review hits a usage limit", scripts: map[string]fakeapi.Script{
			"a-implement0": implementScript(),
			"a-review0":    {fakeapi.Bash(sneakCommit), fakeapi.RateLimited("")},
			"a-review0~2":  {review("conform")},
		}, wantCause: "the review session changed the lot's worktrees (HEAD moved)"},
		{name: "review stopped by SIGINT", stop: syscall.SIGINT, scripts: map[string]fakeapi.Script{
			"a-implement0": implementScript(),
			"a-review0":    {fakeapi.Bash(sneakCommit), fakeapi.Stall()},
			"a-review0~2":  {review("conform")},
		}, wantCause: "the review session changed the lot's worktrees (HEAD moved)"},
		{name: "cadence killed during the review", stop: syscall.SIGKILL, scripts: map[string]fakeapi.Script{
			"a-implement0": implementScript(),
			"a-review0":    {fakeapi.Bash(sneakCommit), fakeapi.Stall()},
			"a-review0~2":  {review("conform")},
		}, wantCause: "during its earlier review session, which cadence could not check"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, c.scripts, waveOpts{Agent: "sandbox = false", Lot: c.lot})
			marker := "a-review0"
			if c.lot != "" {
				marker = "a-precheck0"
			}
			if c.stop != 0 {
				p, _ := e.startUntilTurn(marker, 2) // its commit is made
				p.signal(c.stop)
				<-p.done
				p.cancel()
				t.Logf("first apply, stopped by %v:\n%s", c.stop, indentLines(p.out.String()))
			} else {
				e.apply()
			}
			// The next apply (trying past a recorded usage limit) must
			// not integrate the sneaked commit either.
			r := e.apply("-ignore-quota")
			r.wantCode(t, 1)
			a := e.lot(e.state(), "a")
			if a.Status != state.LotHandedBack || !strings.Contains(a.Cause, c.wantCause) {
				t.Errorf("lot a: %s (%s), want handed back with %q; steps %s", a.Status, a.Cause, c.wantCause, steps(a))
			}
			if log := e.git(e.repo, "log", "--format=%s", "main"); strings.Contains(log, "sneak") {
				t.Errorf("the read-only session's commit reached main:\n%s", log)
			}
			if c.stop == 0 && !strings.Contains(strings.Join(a.Warnings, "\n"), "is not trusted") {
				t.Errorf("no warning on the lot: %q", a.Warnings)
			}
			if len(e.turns("a-review0~2")) > 0 || len(e.turns("a-implement0")) > 0 && c.lot != "" {
				t.Error("a session ran after the untrusted one")
			}
		})
	}
}
