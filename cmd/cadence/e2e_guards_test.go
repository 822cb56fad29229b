//go:build unix

package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// (g) A tool call hangs: the step times out (timeout = "20s": on a loaded
// 2-core machine the CLI alone may need 8–10 s to reach its first tool
// call, and the sleep must really run before the timeout), the lot
// fails, and nothing of the session is left running: no process with its
// CADENCE_SESSION mark, no sleep.
func e2eHangingTool(t *testing.T) {
	// The Bash tool refuses a bare `sleep N` (Claude Code 2.1.328), and this one
	// too while background tasks are on ("Blocked: sleep 613 followed by:
	// wait … use run_in_background"); cadence's sessions have
	// CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1, and then it runs.
	const hang = "sleep 613 & wait"
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {fakeapi.Bash(hang).WithUsage(fakeapi.Usage{InputTokens: 1000, OutputTokens: 300}), writeDone("never reached")},
	}, waveOpts{Lot: `  timeout = "20s"`})
	p := e.start(e.applyArgs()...)
	// The sleep must really run (or nothing is proved below).
	sleeping := false
	testutil.Eventually(60*time.Second, func() bool {
		for _, l := range marked("ANTHROPIC_BASE_URL=" + e.url) {
			if strings.HasSuffix(l, " sleep 613") {
				sleeping = true
				return true
			}
		}
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	})
	r := p.wait()
	if !sleeping {
		t.Error("no sleep process was seen")
	}
	if reqs := e.turns("a-implement0"); len(reqs) > 1 {
		t.Fatalf("the Bash call ended (%d requests); its result: %+v", len(reqs), reqs[1].ToolResults())
	}
	r.wantCode(t, 1)
	r.wantOut(t, `a implement timed-out`, `a failed: implement session timed-out`)
	// The step ended by its timeout, not by the tool's end (613 s).
	if r.took > 300*time.Second {
		t.Errorf("apply took %v with a 20s timeout", r.took)
	}
	a := e.lot(e.state(), "a")
	impl := stepsOf(a, state.StepImplement)
	if a.Status != state.LotFailed || len(impl) != 1 || impl[0].Status != state.StepTimedOut || impl[0].SessionID == "" {
		t.Fatalf("lot a %s, steps %s", a.Status, steps(a))
	}
	e.noneLeft(impl[0].SessionID)

	// The tokens of a session that was stopped are counted too: its one
	// model turn said 1000 in, 300 out.
	t.Run("tokens", func(t *testing.T) {
		want := state.Usage{Input: 1000, Output: 300}
		if got := impl[0].Usage; got != want {
			t.Errorf("the timed-out implement counted %+v, want %+v", got, want)
		}
	})
}

// (i) SIGINT while a session waits for a slow answer: cadence stops the
// session, saves the state (the step interrupted) and exits 130 with no
// claude left; apply again replays the review in a fresh session and
// finishes.
func e2eSigint(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-review0":    {review("conform").WithDelay(30 * time.Second)},
		"a-review0~2":  {review("conform")},
	}, waveOpts{})
	p := e.start(e.applyArgs()...)
	var session string
	if !testutil.Eventually(60*time.Second, func() bool {
		if q := e.srv.RequestsFor("a-review0"); len(q) > 0 {
			session = q[0].SessionID
			return true
		}
		return false
	}) {
		p.signal(syscall.SIGKILL)
		p.wait()
		t.Fatal("the review never asked the API")
	}
	if len(marked("CADENCE_SESSION="+session)) == 0 {
		t.Errorf("no process carries the review's mark CADENCE_SESSION=%s", session)
	}
	sent := time.Now()
	p.signal(syscall.SIGINT)
	r := p.wait()
	r.wantCode(t, 130)
	r.wantOut(t, `stopping: no new step starts`, `Interrupted: cadence apply \S*wave\.hcl resumes\.`)
	if d := time.Since(sent); d > 15*time.Second {
		t.Errorf("cadence took %v to stop", d)
	}
	e.noneLeft(session)

	st := e.state()
	a := e.lot(st, "a")
	rev := stepsOf(a, state.StepReview)
	if st.Status != state.WaveInterrupted || a.Status != state.LotInterrupted || len(rev) != 1 || rev[0].Status != state.StepInterrupted || rev[0].SessionID != session {
		t.Fatalf("wave %s, lot a %s, steps %s", st.Status, a.Status, steps(a))
	}

	r = e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	a = e.lot(e.state(), "a")
	if got := steps(a); a.Status != state.LotDone || got != "implement:ok test:ok review:interrupted review:ok integrate:ok" {
		t.Errorf("lot a %s, steps %q", a.Status, got)
	}
	if n := len(e.turns("a-implement0")); n != 2 {
		t.Errorf("the implement step ran again (%d requests)", n)
	}
	if again := e.turns("a-review0~2"); len(again) != 1 || again[0].SessionID == session {
		t.Errorf("the review was not replayed in a fresh session: %d requests", len(again))
	}
}

// (j) A review that edits a file: its verdict is not trusted, the lot is
// handed back. Without the sandbox (with it, the review's worktree is
// read-only and the edit fails: e2e_reports_test.go), a shell redirection
// is what a read-only session can still write: the after-check is the
// backstop.
func e2eReviewEdits(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-review0":    {fakeapi.Bash("echo reviewed >> README.md"), review("conform")},
	}, waveOpts{Agent: "sandbox = false"})
	base := e.git(e.repo, "rev-parse", "main")
	r := e.apply()
	r.wantCode(t, 1)
	r.wantOut(t, `verdict is not trusted`, `a handed-back: `)
	a := e.lot(e.state(), "a")
	if a.Status != state.LotHandedBack || !strings.Contains(a.Cause, "verdict is not trusted") {
		t.Errorf("lot a %s: %s", a.Status, a.Cause)
	}
	if reqs := e.turns("a-review0"); len(reqs) < 2 || len(reqs[1].ToolResults()) == 0 || reqs[1].ToolResults()[0].IsError {
		t.Errorf("the review's edit did not run: %+v", reqs)
	}
	if got := e.git(e.repo, "rev-parse", "main"); got != base {
		t.Error("main moved")
	}
	// cadence never discards an agent's work: the edit is still there.
	if got := e.git(a.Worktree, "status", "--porcelain"); got != "M README.md" {
		t.Errorf("worktree status %q", got)
	}
}

// (k) A session tries to push, four ways, to a repository with a bare
// remote: the CLI's deny rule, cadence's push URLs and its pre-push hook
// stop every one, the remote is unchanged, and cadence reports the
// attempts.
func e2ePush(t *testing.T) {
	remote := t.TempDir() + "/remote.git"
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	attempts := []string{
		"git push origin HEAD:refs/heads/x1",
		"git -C . push origin HEAD:refs/heads/x2",
		"bash -c 'git push origin HEAD:refs/heads/x3'",
		"git -C . push " + remote + " HEAD:refs/heads/x4", // a URL: pushInsteadOf applies
	}
	script := fakeapi.Script{commit("f.txt", "f")}
	for _, c := range attempts {
		script = append(script, fakeapi.Bash(c))
	}
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": append(script, writeDone("added f.txt")),
		"a-review0":    {review("conform")},
	}, waveOpts{})
	e.git(e.repo, "remote", "add", "origin", remote)
	e.git(e.repo, "push", "-q", "origin", "main")
	before := lsRemote(t, remote)

	r := e.apply()
	if after := lsRemote(t, remote); after != before {
		t.Errorf("the remote changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	reqs := e.turns("a-implement0")
	if len(reqs) != len(attempts)+2 {
		t.Fatalf("%d implement requests, want %d", len(reqs), len(attempts)+2)
	}
	// What stopped each attempt: the CLI's deny rule, then cadence's guard
	// config (the push URLs and pushInsteadOf send every push to its
	// helper, which says why).
	stoppedBy := []string{"has been denied", "cadence: no push during wave w (lot a)", "cadence: no push during wave w (lot a)", "cadence: no push during wave w (lot a)"}
	for i, c := range attempts {
		tr := reqs[i+2].ToolResults()
		res := tr[len(tr)-1]
		t.Logf("%s → error %v: %s", c, res.IsError, res.Text)
		if !res.IsError || !strings.Contains(res.Text, stoppedBy[i]) {
			t.Errorf("%s: want a failure with %q, got %s", c, stoppedBy[i], res.Text)
		}
	}
	r.wantCode(t, 0)
	r.wantOut(t, `push attempt: git push origin HEAD:refs/heads/x1`, `push attempt: git -C \. push origin`,
		`push attempt: bash -c 'git push`, `push attempt: git -C \. push /\S+/remote\.git`)
	a := e.lot(e.state(), "a")
	w := strings.Join(a.Warnings, "\n")
	for _, c := range attempts {
		if !strings.Contains(w, "the session ran a push command: "+c) {
			t.Errorf("no warning for %q in %q", c, a.Warnings)
		}
	}
	if a.Status != state.LotDone {
		t.Errorf("lot a %s: %s", a.Status, a.Cause)
	}
}

// (k) A push that gets past every git-level guard (git send-pack, plumbing:
// no hook, no push URL) from an agent without the sandbox (which would
// refuse it: see e2e_sandbox_test.go): cadence sees the remote change after
// the session, fails the lot and stops the wave on the incident.
func e2ePushIncident(t *testing.T) {
	remote := t.TempDir() + "/remote.git"
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {
			commit("f.txt", "f"),
			fakeapi.Bash("git send-pack " + remote + " HEAD:refs/heads/sneaky"),
			writeDone("added f.txt"),
		},
		"a-review0":    {review("conform")},
		"b-implement0": implementScript(),
	}, waveOpts{Agent: "  sandbox = false", More: `
lot "b" {
  repo  = repo.app
  brief = "Add b.txt."
}
`})
	e.git(e.repo, "remote", "add", "origin", remote)
	e.git(e.repo, "push", "-q", "origin", "main")

	r := e.apply()
	if !strings.Contains(lsRemote(t, remote), "refs/heads/sneaky") {
		t.Fatal("the push did not get through: nothing to detect")
	}
	r.wantCode(t, 1)
	r.wantOut(t, `INCIDENT: lot a: a push happened during the session: the remotes of repo app changed; the wave stops`)
	st := e.state()
	a := e.lot(st, "a")
	if a.Status != state.LotFailed || !strings.Contains(a.Cause, "a push happened during the session") {
		t.Errorf("lot a %s: %s", a.Status, a.Cause)
	}
	if n := len(e.turns("a-review0")) + len(e.turns("b-implement0")); n != 0 {
		t.Errorf("%d requests after the incident", n)
	}
	if b := st.Lots["b"]; b != nil && b.Status == state.LotDone {
		t.Error("lot b ran after the incident")
	}
}

func lsRemote(t *testing.T, remote string) string {
	t.Helper()
	out, err := exec.Command("git", "ls-remote", remote).CombinedOutput()
	if err != nil {
		t.Fatalf("git ls-remote: %v\n%s", err, out)
	}
	return string(out)
}
