package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

func stepsOf(l *state.Lot) string {
	var k []string
	for _, s := range l.Steps {
		k = append(k, fmt.Sprintf("%s%d", s.Kind, s.Pass))
	}
	return strings.Join(k, " ")
}

// TestPrecheckAlreadyDone: a precheck that finds the work done hands the
// lot back with its evidence; one that does not goes on to implement.
func TestPrecheckAlreadyDone(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
  parallel = 2
}
defaults {
  precheck = true
}
`+agentLots("done-before", "todo"))
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}
		if s.Step == state.StepPrecheck {
			out.Report = &Report{AlreadyDone: s.Lot == "done-before", Evidence: "see store.go"}
		}
		return out, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	lots := h.lots()
	if l := lots["done-before"]; l.Status != state.LotHandedBack || !strings.Contains(l.Cause, "already done: see store.go") || stepsOf(l) != "precheck0" {
		t.Errorf("done-before = %s %q %s", l.Status, l.Cause, stepsOf(l))
	}
	if l := lots["todo"]; l.Status != state.LotDone || stepsOf(l) != "precheck0 implement0 review0 integrate0" {
		t.Errorf("todo = %s %s", l.Status, stepsOf(l))
	}
}

// TestMinorPass: a conform review with minor findings gets one pass on
// them and a short re-review; small lots skip it.
func TestMinorPass(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
  parallel = 2
}
lot "big" {
  repo = repo.r
  brief = "x"
}
lot "small" {
  repo = repo.r
  brief = "x"
  small = true
}
`)
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}
		if s.Step == state.StepReview {
			out.Report = &Report{Verdict: "fine", Findings: []state.Finding{{Severity: "minor", Text: "rename x"}}}
		}
		if s.Step == state.StepFixMinors && !strings.Contains(s.Brief, "rename x") {
			out = Outcome{Status: state.StepFailed, Cause: "the minor brief lacks the finding"}
		}
		return out, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	lots := h.lots()
	if l := lots["big"]; l.Status != state.LotDone || stepsOf(l) != "implement0 review0 fix-minors0 review-recheck0 integrate0" {
		t.Errorf("big = %s %s %s", l.Status, stepsOf(l), l.Cause)
	}
	if l := lots["small"]; l.Status != state.LotDone || stepsOf(l) != "implement0 review0 integrate0" {
		t.Errorf("small = %s %s", l.Status, stepsOf(l))
	}
}

// TestLotBudgetKeepsReviewReserve: write passes stop when the lot budget
// could not pay for the review after them; the review after a fix always
// runs.
func TestLotBudgetKeepsReviewReserve(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
lot "a" {
  repo = repo.r
  brief = "x"
  budget = 1000
}
`)
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Usage: state.Usage{Input: 300}, Report: &Report{Summary: "ok"}}
		if s.ReadOnly {
			out.Usage = state.Usage{Input: 200}
			out.Report = &Report{Verdict: "no", Findings: []state.Finding{{Severity: "major", Text: "again"}}}
		}
		return out, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	// implement 300, review 200, fix 300 (800 + reserve 200 = 1000 ok),
	// review 200 (always runs), then no second fix: 1000 + 200 > 1000.
	l := h.lots()["a"]
	if l.Status != state.LotHandedBack || stepsOf(l) != "implement0 review0 fix1 review1" || !strings.Contains(l.Cause, "budget of 1k is spent") {
		t.Errorf("a = %s %s %q", l.Status, stepsOf(l), l.Cause)
	}
}

// TestQuotaWait: with on_quota = "wait", a usage limit pauses every new
// session until the reset, then the step runs again in a fresh session.
func TestQuotaWait(t *testing.T) {
	h := newHarness(t, `wave "w" {
  on_quota = "wait"
}
repo "r" {
  path = "."
}
`+agentLots("a"))
	calls := 0
	var reset time.Time
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		calls++
		if calls == 1 {
			reset = time.Now().Add(300 * time.Millisecond)
			return Outcome{Status: state.StepQuota, Cause: "usage limit", ResetAt: &reset}, 0
		}
		if time.Now().Before(reset) {
			return Outcome{Status: state.StepFailed, Cause: "started before the reset"}, 0
		}
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}, time.Millisecond
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("res %+v err %v", res, err)
	}
	if l := h.lots()["a"]; stepsOf(l) != "implement0 implement0 review0 integrate0" || l.Steps[0].Status != state.StepQuota {
		t.Errorf("a = %s", stepsOf(l))
	}
}

// TestQuotaSuspend: by default a usage limit suspends the wave with the
// reset time.
func TestQuotaSuspend(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a", "b"))
	reset := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		return Outcome{Status: state.StepQuota, Cause: "429", ResetAt: &reset}, 0
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveSuspendedQuota || res.ResetAt == nil || !res.ResetAt.Equal(reset) {
		t.Fatalf("res %+v err %v", res, err)
	}
	if h.status("a") != state.LotSuspended {
		t.Errorf("a = %s", h.status("a"))
	}
}

// TestIntegratedBeforeCrash: a lot whose integration was recorded before
// cadence stopped (removing its worktree, say) is only tidied up: no
// session, no second integration.
func TestIntegratedBeforeCrash(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a"))
	yes := true
	store, err := state.OpenStore(h.dir + "/wave.state.json")
	if err != nil {
		t.Fatal(err)
	}
	store.UpdateLot("a", func(l *state.Lot) {
		l.Status, l.IntegratedSHA = state.LotRunning, "abc"
		l.Steps = []state.Step{
			{Kind: state.StepImplement, Status: state.StepOK},
			{Kind: state.StepReview, Status: state.StepOK, Conform: &yes},
			{Kind: state.StepIntegrate, Status: state.StepOK},
		}
	})
	store.Close()
	h.git.integrate["cadence/w/a"] = fmt.Errorf("integrated twice")
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	if l := h.lots()["a"]; l.Status != state.LotDone || len(l.Steps) != 3 || len(h.agent.spans) != 0 {
		t.Errorf("a = %s %s, %d sessions", l.Status, stepsOf(l), len(h.agent.spans))
	}
}

// TestResumeFixAfterRecheck: a lot whose re-review (after the minor pass)
// was not conform, stopped before its fix began, resumes at a full fix pass
// followed by a full review, as an uninterrupted run does (state.Resume).
func TestResumeFixAfterRecheck(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a"))
	yes, no := true, false
	store, err := state.OpenStore(h.dir + "/wave.state.json")
	if err != nil {
		t.Fatal(err)
	}
	store.UpdateLot("a", func(l *state.Lot) {
		l.Status = state.LotQueued
		l.Findings = []state.Finding{{Severity: state.SeverityMajor, Text: "broke y"}}
		l.Steps = []state.Step{
			{Kind: state.StepImplement, Status: state.StepOK},
			{Kind: state.StepReview, Status: state.StepOK, Conform: &yes},
			{Kind: state.StepFixMinors, Status: state.StepOK},
			{Kind: state.StepRecheck, Status: state.StepOK, Conform: &no},
		}
	})
	store.Close()
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok", Verdict: "fine"}}, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	want := "implement0 review0 fix-minors0 review-recheck0 fix1 review1 integrate0"
	if l := h.lots()["a"]; l.Status != state.LotDone || stepsOf(l) != want {
		t.Errorf("a = %s %s, want done %s", l.Status, stepsOf(l), want)
	}
}

// TestTestGateRecordsItsPass: the test gate after fix N is recorded as pass
// N, so that a gate interrupted there resumes into review pass N (not the
// first review, which would cost a second fix 1).
func TestTestGateRecordsItsPass(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
  test = "true"
}
`+agentLots("a"))
	reviews := 0
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		r := &Report{Summary: "ok", Verdict: "fine"}
		if s.Step == state.StepReview {
			if reviews++; reviews == 1 {
				r.Findings = []state.Finding{{Severity: state.SeverityMajor, Text: "broke y"}}
			}
		}
		return Outcome{Status: state.StepOK, Report: r}, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	l := h.lots()["a"]
	if got := stepsOf(l); !strings.HasPrefix(got, "implement0 test0 review0 fix1 test1 review1 integrate0") {
		t.Fatalf("a = %s %s", l.Status, got)
	}
	// Interrupted at that gate: the next run goes on at review pass 1.
	store, err := state.OpenStore(h.dir + "/wave.state.json")
	if err != nil {
		t.Fatal(err)
	}
	no := false
	store.UpdateLot("a", func(l *state.Lot) {
		l.Status = state.LotInterrupted
		l.Steps = l.Steps[:5] // implement test review fix test
		l.Steps[2].Conform = &no
		l.Steps[4].Status = state.StepInterrupted
		l.IntegratedSHA, l.PatchID = "", ""
	})
	store.Close()
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	l = h.lots()["a"]
	if got := stepsOf(l); !strings.HasPrefix(got, "implement0 test0 review0 fix1 test1 test1 review1 integrate0") || l.Status != state.LotDone {
		t.Errorf("after the interrupted gate: a = %s %s", l.Status, got)
	}
}

// TestSessionMovement: a write session can tell whether its worktree moved
// since it started (its timeout is extended only then): not before a
// commit, yes after one, and not again until the next; a read-only session,
// which is never extended, gets no such look.
func TestSessionMovement(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a"))
	type look struct {
		step  state.StepKind
		moved []bool
		none  bool
	}
	var looks []look
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		l := look{step: s.Step, none: s.Moved == nil}
		if s.Moved != nil {
			l.moved = append(l.moved, s.Moved())
			h.git.commit(s.Dir)
			l.moved = append(l.moved, s.Moved(), s.Moved())
		}
		looks = append(looks, l)
		r := &Report{Summary: "ok"}
		if s.ReadOnly {
			r = &Report{Verdict: "fine"}
		}
		return Outcome{Status: state.StepOK, Report: r}, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	if h.status("a") != state.LotDone || len(looks) != 2 {
		t.Fatalf("a %s, sessions %+v", h.status("a"), looks)
	}
	if w := looks[0]; w.step != state.StepImplement || w.none || fmt.Sprint(w.moved) != "[false true false]" {
		t.Errorf("implement: %+v, want moved false, then true after a commit, then false", w)
	}
	if r := looks[1]; r.step != state.StepReview || !r.none {
		t.Errorf("review: %+v, want no look at the worktree", r)
	}
}
