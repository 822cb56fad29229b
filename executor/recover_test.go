package executor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// A worktree that cannot be made because of the machine (a full disk) or
// cadence's cancel leaves the lot interrupted with the cause, never failed:
// its dependents are not blocked and the next apply finishes it. A worktree
// refused for another reason still fails the lot.
func TestWorktreeInterruptNeverFails(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want state.LotStatus
	}{
		{"full disk", fmt.Errorf("git worktree add: %w", syscall.ENOSPC), state.LotInterrupted},
		{"cancelled", fmt.Errorf("git worktree add: %w", context.Canceled), state.LotInterrupted},
		{"git said no space", errors.New("git worktree add (in /r): exit 128: fatal: could not write index: No space left on device"), state.LotInterrupted},
		{"not a usable worktree", errors.New("/x is not a usable worktree of /r on cadence/w/a; move it aside"), state.LotFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a")+`lot "b" {
  repo = repo.r
  brief = "do b"
  depends_on = [lot.a]
}
`)
			h.git.worktreeErr = c.err
			res, err := h.run(context.Background(), planner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a := h.lots()["a"]
			if a.Status != c.want || !strings.Contains(a.Cause, "cannot make the worktree") {
				t.Fatalf("a = %s (%s), want %s", a.Status, a.Cause, c.want)
			}
			if c.want == state.LotFailed {
				return
			}
			if st := h.status("b"); st == state.LotBlocked {
				t.Errorf("b is blocked by an interrupted lot")
			}
			if res.Status != state.WaveNeedsLead {
				t.Errorf("wave %s, want needs-lead", res.Status)
			}
			h.git.worktreeErr = nil
			res, err = h.run(context.Background(), planner.Options{})
			if err != nil || res.Status != state.WaveDone || h.status("a") != state.LotDone || h.status("b") != state.LotDone {
				t.Errorf("next apply: %+v %v a=%s b=%s", res, err, h.status("a"), h.status("b"))
			}
		})
	}
}

// A command lot interrupted after its commit is replayed from the commit
// it started from: the worktree is reset there, the earlier attempt kept
// under a backup ref that the lot records.
func TestCommandReplayResets(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
lot "c" {
  repo = repo.r
  run  = "sleep 30"
}
`)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// The run step has started when its pid is recorded; the
		// "command" then commits (the fake git's counter, in the worktree
		// the state records) and is killed.
		wt := ""
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			st, _, err := state.Read(filepath.Join(h.dir, "wave.state.json"))
			if err == nil && st.Lots["c"] != nil && len(st.Lots["c"].Steps) > 0 && st.Lots["c"].Steps[0].PID > 0 {
				wt = st.Lots["c"].Worktree
				break
			}
		}
		h.git.commit(wt)
		cancel()
	}()
	res, err := h.run(ctx, planner.Options{})
	if err != nil || res.Status != state.WaveInterrupted {
		t.Fatalf("first run: %+v %v", res, err)
	}
	if c := h.lots()["c"]; c.Status != state.LotInterrupted {
		t.Fatalf("c = %+v", c)
	}
	h.cfg.Lots[0].Run = "true"
	res, err = h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("replay: %+v %v", res, err)
	}
	c := h.lots()["c"]
	if len(h.git.resets) != 1 || h.git.resets[0] != "c@"+fakeBase {
		t.Errorf("resets %v, want one to the base the lot started from", h.git.resets)
	}
	if len(c.Backups) != 1 || c.Backups[0] != "refs/cadence/backup/w/c/1" {
		t.Errorf("backups %v", c.Backups)
	}
}

// -replace sets the old branch aside under a backup ref (kept in the lot's
// record) and starts afresh; the patch-id of an earlier integration is
// kept. A replaced lot whose rebased branch changes the base is integrated
// again, even with the same patch-id (the base lost the change: a revert);
// one whose branch adds nothing to the base is not integrated twice.
func TestReplaceSetsAsideBranch(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a"))
	if res, err := h.run(context.Background(), planner.Options{}); err != nil || res.Status != state.WaveDone {
		t.Fatalf("first: %+v %v", res, err)
	}
	first := h.lots()["a"]
	integrateCause := func(l *state.Lot) string {
		cause := ""
		for _, s := range l.Steps {
			if s.Kind == state.StepIntegrate {
				cause = s.Cause
			}
		}
		return cause
	}
	// The fake's patch-id is the same for every change, and the diff is
	// not empty: the base does not hold the change, so it is integrated.
	res, err := h.run(context.Background(), planner.Options{Replace: []string{"a"}})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("replace: %+v %v", res, err)
	}
	a := h.lots()["a"]
	if len(h.git.asides) != 1 || h.git.asides[0] != "cadence/w/a" {
		t.Errorf("asides %v", h.git.asides)
	}
	if len(a.Backups) != 1 || a.Backups[0] != "refs/cadence/backup/w/a/1" {
		t.Errorf("backups %v", a.Backups)
	}
	if a.PatchID != first.PatchID || strings.Contains(integrateCause(a), "not integrated twice") {
		t.Errorf("replaced lot whose branch changes the base not integrated: patch %q cause %q", a.PatchID, integrateCause(a))
	}
	// The branch adds nothing to the base: the change is there already.
	h.git.mu.Lock()
	h.git.emptyDiff = true
	h.git.mu.Unlock()
	if res, err := h.run(context.Background(), planner.Options{Replace: []string{"a"}}); err != nil || res.Status != state.WaveDone {
		t.Fatalf("second replace: %+v %v", res, err)
	}
	a = h.lots()["a"]
	if a.PatchID != first.PatchID || !strings.Contains(integrateCause(a), "not integrated twice") {
		t.Errorf("replaced lot already on the base integrated again: patch %q cause %q", a.PatchID, integrateCause(a))
	}
}

// The end of a run says what is left: done only when every lot is done;
// -target leaving lots unselected is partial; a lot waiting for an answer
// is needs-lead, never interrupted.
func TestWaveStatusWords(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a", "b", "q"))
	res, err := h.run(context.Background(), planner.Options{Targets: []string{"a"}})
	if err != nil || res.Status != state.WavePartial {
		t.Fatalf("-target a: %+v %v, want partial", res, err)
	}
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}
		if s.Lot == "q" && s.Step == state.StepImplement {
			out.Report.Questions = []string{"Which store?"}
		}
		return out, time.Millisecond
	}
	res, err = h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveNeedsLead {
		t.Fatalf("question: %+v %v, want needs-lead", res, err)
	}
}

// An agent step interrupted after it committed is replayed in a fresh
// session whose brief lists the lot's commits so far (docs/running.md).
func TestAgentReplayBriefListsCommits(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a"))
	ctx, cancel := context.WithCancel(context.Background())
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		h.git.commit(s.Dir) // the session commits, then is interrupted
		cancel()
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}, time.Hour
	}
	if res, err := h.run(ctx, planner.Options{}); err != nil || res.Status != state.WaveInterrupted {
		t.Fatalf("first: %+v %v", res, err)
	}
	h.agent.script = nil
	if res, err := h.run(context.Background(), planner.Options{}); err != nil || res.Status != state.WaveDone {
		t.Fatalf("replay: %+v %v", res, err)
	}
	var replay *span
	for i := range h.agent.spans {
		if sp := &h.agent.spans[i]; sp.lot == "a" && sp.step == state.StepImplement && i > 0 {
			replay = sp
		}
	}
	if replay == nil {
		t.Fatalf("no replayed implement session: %+v", h.agent.spans)
	}
	if !strings.Contains(replay.brief, "Commits already made for this lot") || !strings.Contains(replay.brief, fmt.Sprintf("a%039x commit (", 1)) {
		t.Errorf("the replayed brief does not list the first attempt's commit:\n%s", replay.brief)
	}
}
