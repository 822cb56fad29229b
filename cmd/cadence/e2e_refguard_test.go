//go:build unix

package main

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2ERefGuard: an agent session attacks the base, through the real
// Claude Code CLI and the fake API, with the lead's checkout on another
// branch (so git lets a worktree check main out). Whatever layer catches
// it (a reference-transaction hook or a sandbox refusing the update:
// prevented; cadence's check after the session: detected), the base ends
// where it was; when detected, the foreign value is under the lot's rescue
// ref, the wave stops as an incident, and the lot's summary does not
// claim that its work is on its branch.
func TestE2ERefGuard(t *testing.T) {
	fakeapi.FindCLI(t)
	for _, sc := range []struct {
		name string
		bash string
		// foreign is the subject of the commit main is found at, when the
		// attack got through.
		foreign string
		// headMoves: the attack leaves the worktree on main, which no
		// layer prevents (git does not report a checkout to the
		// reference-transaction hook): always an incident.
		headMoves bool
	}{
		{name: "checkout-commit", bash: "git checkout -q main && git commit --allow-empty -qm evil", foreign: "evil", headMoves: true},
		{name: "update-ref-no-hooks", bash: "git -c core.hooksPath=/dev/null update-ref refs/heads/main HEAD~1", foreign: "init"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, map[string]fakeapi.Script{
				"a-implement0": {fakeapi.Bash(sc.bash), writeDone("did it")},
				"a-review0":    {review("conform")},
			}, waveOpts{})
			e.git(e.repo, "commit", "-q", "--allow-empty", "-m", "second")
			e.git(e.repo, "checkout", "-q", "-b", "work")
			base := e.git(e.repo, "rev-parse", "main")

			r := e.apply()
			if tr := e.turns("a-implement0"); len(tr) > 1 && len(tr[1].ToolResults()) > 0 {
				res := tr[1].ToolResults()[0]
				t.Logf("the attack's Bash call: error %v: %s", res.IsError, res.Text)
			}
			if got := e.git(e.repo, "rev-parse", "main"); got != base {
				t.Errorf("main at %s, want %s", got, base)
			}
			if got := e.git(e.repo, "symbolic-ref", "HEAD"); got != "refs/heads/work" {
				t.Errorf("the lead's checkout is on %s", got)
			}
			rescued := e.git(e.repo, "for-each-ref", "--format=%(refname) %(subject)", "refs/cadence/rescue")
			a := e.lot(e.state(), "a")
			if !sc.headMoves && rescued == "" {
				// Prevented: the update never happened; the lot went on.
				t.Logf("prevented: %s", steps(a))
				if strings.Contains(r.out, "INCIDENT") {
					t.Errorf("an incident with nothing rescued:\n%s", r.out)
				}
				return
			}
			t.Logf("detected; rescue refs: %q", rescued)
			if rescued != "" && rescued != "refs/cadence/rescue/w/a/1 "+sc.foreign {
				t.Errorf("rescue refs %q, want refs/cadence/rescue/w/a/1 holding %q", rescued, sc.foreign)
			}
			r.wantCode(t, 1)
			r.wantOut(t, `INCIDENT: lot a: during its implement step, not by cadence: `,
				`a failed: implement session failed: incident: `,
				`its branch cadence/w/a holds only what was committed on it`)
			if sc.headMoves {
				r.wantOut(t, `the worktree \S+ was on branch main instead of the lot's branch cadence/w/a; put back`)
			}
			if rescued != "" {
				r.wantOut(t, `refs/heads/main moved from [0-9a-f]{12} to [0-9a-f]{12} \(kept under refs/cadence/rescue/w/a/1\); put back to `+base[:12])
			}
			if strings.Contains(r.out, "its work is on branch cadence/w/a") {
				t.Error("the summary says the work is on the lot's branch")
			}
			if a.Status != state.LotFailed || len(stepsOf(a, state.StepReview)) != 0 {
				t.Errorf("lot a %s, steps %s", a.Status, steps(a))
			}
			if got := e.git(a.Worktree, "symbolic-ref", "HEAD"); got != "refs/heads/cadence/w/a" {
				t.Errorf("the lot's worktree is on %s", got)
			}
			if n := len(strings.Fields(e.git(e.repo, "log", "--format=%h", "main..cadence/w/a"))); n != 0 {
				t.Errorf("the lot's branch has %d commits: the attack is not the lot's work", n)
			}
		})
	}
}
