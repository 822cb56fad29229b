package executor

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// TestOrderAndSessionCap runs 40 agent lots with random dependencies over
// three repositories: no lot starts before its dependencies are done, and
// never more than max_sessions sessions run at once.
func TestOrderAndSessionCap(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var b strings.Builder
	b.WriteString("wave \"w\" {\n  max_sessions = 3\n}\n")
	for _, r := range []string{"a", "b", "c"} {
		fmt.Fprintf(&b, "repo %q {\n  path = \".\"\n  parallel = 2\n}\n", r)
	}
	deps := map[string][]string{}
	for i := 0; i < 40; i++ {
		id := fmt.Sprintf("L%d", i)
		var ds []string
		for k := 0; k < 2 && i > 0; k++ {
			if d := fmt.Sprintf("L%d", rng.Intn(i)); !contains(ds, d) {
				ds = append(ds, d)
			}
		}
		deps[id] = ds
		refs := make([]string, len(ds))
		for j, d := range ds {
			refs[j] = "lot." + d
		}
		fmt.Fprintf(&b, "lot %q {\n  repo = repo.%s\n  brief = \"x\"\n  depends_on = [%s]\n}\n", id, []string{"a", "b", "c"}[i%3], strings.Join(refs, ", "))
	}
	h := newHarness(t, b.String())
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Usage: state.Usage{Input: 1}, Report: &Report{Summary: "ok"}}
		return out, time.Duration(2+rand.Intn(8)) * time.Millisecond
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone || res.Lots[state.LotDone] != 40 {
		t.Fatalf("res %+v err %v", res, err)
	}
	if got := h.agent.maxOverlap(); got > 3 || got < 2 {
		t.Errorf("at most %d sessions at once; cap 3", got)
	}
	first, last := map[string]time.Time{}, map[string]time.Time{}
	for _, s := range h.agent.spans {
		if f, ok := first[s.lot]; !ok || s.start.Before(f) {
			first[s.lot] = s.start
		}
		if s.end.After(last[s.lot]) {
			last[s.lot] = s.end
		}
	}
	for id, ds := range deps {
		for _, d := range ds {
			if first[id].Before(last[d]) {
				t.Errorf("%s started at %v before its dependency %s ended at %v", id, first[id], d, last[d])
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestCriticalPathFirst: with one session, the lot heading the longest
// remaining path starts first, then file order breaks ties.
func TestCriticalPathFirst(t *testing.T) {
	h := newHarness(t, `wave "w" {
  max_sessions = 1
}
repo "r" {
  path = "."
  parallel = 5
}
lot "short" {
  repo = repo.r
  brief = "x"
  estimate = "10m"
}
lot "long" {
  repo = repo.r
  brief = "x"
  estimate = "2h"
}
lot "head" {
  repo = repo.r
  brief = "x"
  estimate = "1h"
}
lot "tail" {
  repo = repo.r
  brief = "x"
  estimate = "2h"
  depends_on = [lot.head]
}
lot "tie" {
  repo = repo.r
  brief = "x"
  estimate = "10m"
}
`)
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, s := range h.agent.spans {
		if s.step == state.StepImplement {
			order = append(order, s.lot)
		}
	}
	// head (3h with tail), long (2h), tail (2h, ready after head), short, tie.
	if got := strings.Join(order, " "); got != "head long tail short tie" {
		t.Errorf("start order %q", got)
	}
}

// TestBlockedPropagation: a failed lot blocks its descendants; unrelated
// lots go on.
func TestBlockedPropagation(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
  parallel = 3
}
`+agentLots("a", "d")+`
lot "b" {
  repo = repo.r
  brief = "x"
  depends_on = [lot.a]
}
lot "c" {
  run = "true"
  depends_on = [lot.b]
}
`)
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if s.Lot == "a" {
			return Outcome{Status: state.StepFailed, Cause: "API Error: 500"}, 0
		}
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}, time.Millisecond
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lots := h.lots()
	if lots["a"].Status != state.LotFailed || !strings.Contains(lots["a"].Cause, "API Error: 500") {
		t.Errorf("a = %+v", lots["a"])
	}
	if lots["b"].Status != state.LotBlocked || lots["b"].BlockedBy != "a failed" || lots["c"].Status != state.LotBlocked || lots["c"].BlockedBy != "b blocked" {
		t.Errorf("b = %+v, c = %+v", lots["b"], lots["c"])
	}
	if lots["d"].Status != state.LotDone || res.Lots[state.LotDone] != 1 {
		t.Errorf("d = %+v res %+v", lots["d"], res)
	}
}

// TestBudgetSuspendsThenResumes: when the wave budget is spent no session
// starts, the rest is suspended; a raised budget resumes where it stopped.
func TestBudgetSuspendsThenResumes(t *testing.T) {
	h := newHarness(t, `wave "w" {
  budget = 250
  max_sessions = 1
}
repo "r" {
  path = "."
}
`+agentLots("a", "b", "c"))
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Usage: state.Usage{Input: 50, Output: 50, CacheRead: 1000}, Report: &Report{Summary: "ok"}}
		return out, time.Millisecond
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveSuspendedBudget {
		t.Fatalf("res %+v err %v", res, err)
	}
	lots := h.lots()
	// a: implement+review = 200; b: implement = 300 ≥ 250, then suspended.
	if lots["a"].Status != state.LotDone || lots["b"].Status != state.LotSuspended || lots["c"].Status != state.LotSuspended {
		t.Fatalf("a=%s b=%s c=%s", lots["a"].Status, lots["b"].Status, lots["c"].Status)
	}
	sessions := len(h.agent.spans)
	res, err = h.run(context.Background(), planner.Options{Budget: 1000})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("resume: res %+v err %v", res, err)
	}
	// b resumes at its review (its implement was done), c runs whole.
	if got := len(h.agent.spans) - sessions; got != 3 {
		t.Errorf("%d sessions on resume, want 3 (b review, c implement and review)", got)
	}
	if h.status("b") != state.LotDone || h.status("c") != state.LotDone {
		t.Errorf("b=%s c=%s", h.status("b"), h.status("c"))
	}
}

// TestInterruptAndResume: cancelling the run (SIGINT) stops the running
// session, records it interrupted, and the next run replays it whole.
func TestInterruptAndResume(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
  parallel = 2
}
`+agentLots("slow", "quick"))
	ctx, cancel := context.WithCancel(context.Background())
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}
		if s.Lot == "slow" && s.Step == state.StepImplement {
			go func() { time.Sleep(50 * time.Millisecond); cancel() }()
			return out, time.Hour
		}
		return out, time.Millisecond
	}
	res, err := h.run(ctx, planner.Options{})
	if err != nil || res.Status != state.WaveInterrupted {
		t.Fatalf("res %+v err %v", res, err)
	}
	slow := h.lots()["slow"]
	if slow.Status != state.LotInterrupted || slow.Cause != "stopped by cadence" || slow.Steps[0].Status != state.StepInterrupted {
		t.Fatalf("slow = %+v", slow)
	}
	h.agent.script = nil
	res, err = h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("resume: res %+v err %v", res, err)
	}
	steps := h.lots()["slow"].Steps
	if steps[0].Status != state.StepInterrupted || steps[1].Kind != state.StepImplement || steps[1].Status != state.StepOK {
		t.Errorf("slow steps after resume: %+v", steps)
	}
}

// TestFixPassesAndHandBack: a review that is not conform costs a fix pass;
// when none is left the lot is handed back with its findings.
func TestFixPassesAndHandBack(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
  parallel = 2
}
defaults {
  fix_passes = 1
}
`+agentLots("fixed", "stubborn"))
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}
		if s.ReadOnly && (s.Lot == "stubborn" || s.Pass == 0) {
			out.Report = &Report{Verdict: "no", Findings: []state.Finding{{Severity: "blocking", File: "a.go", Line: 3, Text: "wrong"}}}
		}
		return out, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	lots := h.lots()
	if lots["fixed"].Status != state.LotDone {
		t.Errorf("fixed = %+v", lots["fixed"])
	}
	var kinds []string
	for _, s := range lots["fixed"].Steps {
		kinds = append(kinds, fmt.Sprintf("%s%d", s.Kind, s.Pass))
	}
	if strings.Join(kinds, " ") != "implement0 review0 fix1 review1 integrate0" {
		t.Errorf("fixed steps %v", kinds)
	}
	st := lots["stubborn"]
	if st.Status != state.LotHandedBack || len(st.Findings) != 1 || !strings.Contains(st.Cause, "not conform after 1 fix pass") {
		t.Errorf("stubborn = %+v", st)
	}
	for _, s := range h.agent.spans {
		if s.lot == "stubborn" && s.step == state.StepFix && !strings.Contains(s.brief, "a.go:3: wrong") {
			t.Errorf("the fix brief does not list the finding:\n%s", s.brief)
		}
	}
}

// TestQuestionThenAnswer: a write step's question stops the lot; with the
// answer recorded, the next run replays that step with the answer.
func TestQuestionThenAnswer(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("q"))
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}
		if !s.ReadOnly && !strings.Contains(s.Brief, "Redis") {
			out.Report.Questions = []string{"Which store?"}
		}
		return out, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	if l := h.lots()["q"]; l.Status != state.LotQuestion || l.Pending().Text != "Which store?" {
		t.Fatalf("q = %+v", l)
	}
	store, _ := state.OpenStore(h.dir + "/wave.state.json")
	store.UpdateLot("q", func(l *state.Lot) { l.Pending().Answer = "Redis" })
	store.Close()
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	if h.status("q") != state.LotDone {
		t.Errorf("q = %+v", h.lots()["q"])
	}
}

// TestChecksAfterSessions: a write step that leaves uncommitted files, and
// a review that commits, hand the lot back.
func TestChecksAfterSessions(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
  parallel = 2
}
`+agentLots("messy", "meddler"))
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if s.Lot == "messy" && !s.ReadOnly {
			h.git.mu.Lock()
			h.git.dirty[s.Dir] = []string{"notes.txt"}
			h.git.mu.Unlock()
		}
		if s.Lot == "meddler" && s.ReadOnly {
			h.git.commit(s.Dir)
		}
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}, time.Millisecond
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	lots := h.lots()
	if lots["messy"].Status != state.LotHandedBack || !strings.Contains(lots["messy"].Cause, "notes.txt") {
		t.Errorf("messy = %+v", lots["messy"])
	}
	if lots["meddler"].Status != state.LotHandedBack || !strings.Contains(lots["meddler"].Cause, "verdict is not trusted") {
		t.Errorf("meddler = %+v", lots["meddler"])
	}
}

// TestIntegrationWaits: an integration refused for a reason outside the
// lot (the base moved) leaves the lot interrupted at integrate, its branch
// kept; the next run retries the integration only, no session again.
func TestIntegrationWaits(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a"))
	h.git.integrate["cadence/w/a"] = errors.New("the base moved")
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := h.lots()["a"]; l.Status != state.LotInterrupted || !strings.Contains(l.Cause, "integration waits") ||
		!strings.Contains(l.Cause, "the base moved") || l.Branch != "cadence/w/a" {
		t.Errorf("a = %+v", l)
	}
	if res.Status != state.WaveNeedsLead {
		t.Errorf("wave %s, want needs-lead", res.Status)
	}
	sessions := len(h.agent.spans)
	delete(h.git.integrate, "cadence/w/a")
	res, err = h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if len(h.agent.spans) != sessions {
		t.Errorf("%d sessions on the retry, want none", len(h.agent.spans)-sessions)
	}
	l := h.lots()["a"]
	n := 0
	for _, s := range l.Steps {
		if s.Kind == state.StepIntegrate && s.Status == state.StepOK {
			n++
		}
	}
	if l.Status != state.LotDone || n != 1 || l.IntegratedSHA != fmt.Sprintf("a%039x", 1) {
		t.Errorf("after the retry a = %+v", l)
	}
}
