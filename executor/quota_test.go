package executor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

func (h *harness) state() *state.State {
	st, _, err := state.Read(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

const oneLotWave = `wave "w" {
  budget_usd = 1
}
repo "r" {
  path = "."
}
`

// TestBudgetUSDCeiling: a session that reaches the dollar ceiling suspends
// the wave naming that ceiling; a run that starts with it reached suspends
// too (it used to end "interrupted"); a raised ceiling (-budget-usd) goes on.
func TestBudgetUSDCeiling(t *testing.T) {
	h := newHarness(t, oneLotWave+agentLots("a"))
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		return Outcome{Status: state.StepOK, Usage: state.Usage{Input: 10}, CostMicros: 1_200_000, Report: &Report{Summary: "ok"}}, 0
	}
	res, err := h.runWith(context.Background(), planner.Options{}, func(*Options) {})
	if err != nil || res.Status != state.WaveSuspendedBudget || res.Ceiling != CeilingUSD {
		t.Fatalf("first run: %+v %v", res, err)
	}
	if st := h.state(); st.BudgetMicros != 1_000_000 || st.Consumed.CostMicros != 1_200_000 || st.Lots["a"].Cause != "the wave's dollar budget (budget_usd) is spent" {
		t.Errorf("state budget %d, cost %d, lot a: %q", st.BudgetMicros, st.Consumed.CostMicros, st.Lots["a"].Cause)
	}
	// The planner refuses such a run; Run itself must still suspend.
	res, err = h.runWith(context.Background(), planner.Options{}, func(*Options) {})
	if err != nil || res.Status != state.WaveSuspendedBudget || res.Ceiling != CeilingUSD {
		t.Fatalf("run over the ceiling: %+v %v", res, err)
	}
	res, err = h.runWith(context.Background(), planner.Options{BudgetUSD: 100_000_000}, func(*Options) {})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("raised: %+v %v", res, err)
	}
	if st := h.state(); st.BudgetMicros != 100_000_000 {
		t.Errorf("state budget %d", st.BudgetMicros)
	}
}

// TestBudgetTokensCeiling: the token ceiling is named as such.
func TestBudgetTokensCeiling(t *testing.T) {
	h := newHarness(t, `wave "w" {
  budget = 100
}
repo "r" {
  path = "."
}
`+agentLots("a"))
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		return Outcome{Status: state.StepOK, Usage: state.Usage{Input: 150}, Report: &Report{Summary: "ok"}}, 0
	}
	res, err := h.runWith(context.Background(), planner.Options{}, func(*Options) {})
	if err != nil || res.Status != state.WaveSuspendedBudget || res.Ceiling != CeilingTokens {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestQuotaUntilWaits: a recorded reset time (on_quota = "wait") holds
// every session until it, then the wave runs; the state keeps it while
// the run waits, and clears it after.
func TestQuotaUntilWaits(t *testing.T) {
	h := newHarness(t, oneLotWave+agentLots("a"))
	until := time.Now().Add(300 * time.Millisecond)
	var first time.Time
	var recorded *time.Time
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if first.IsZero() {
			first = time.Now()
			recorded = h.state().ResetAt
		}
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}, 0
	}
	res, err := h.runWith(context.Background(), planner.Options{}, func(o *Options) { o.QuotaUntil = &until })
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("%+v %v", res, err)
	}
	if first.Before(until) {
		t.Errorf("a session started %v before the reset time", until.Sub(first))
	}
	if recorded == nil || !recorded.Equal(until) {
		t.Errorf("reset_at while waiting: %v", recorded)
	}
	if st := h.state(); st.ResetAt != nil {
		t.Errorf("reset_at after the run: %v", st.ResetAt)
	}
}

// TestQuotaUntilInterrupted: Ctrl-C during the wait ends the run with no
// session, and the reset time stays recorded.
func TestQuotaUntilInterrupted(t *testing.T) {
	h := newHarness(t, oneLotWave+agentLots("a"))
	until := time.Now().Add(time.Hour)
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		t.Error("a session started before the reset time")
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}, 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	res, err := h.runWith(ctx, planner.Options{}, func(o *Options) {
		o.QuotaUntil = &until
		o.Events = func(e Event) {
			if e.Kind == EvOutput {
				cancel()
			}
		}
	})
	if err != nil || res.Status != state.WaveInterrupted {
		t.Fatalf("%+v %v", res, err)
	}
	if st := h.state(); st.ResetAt == nil || !st.ResetAt.Equal(until) {
		t.Errorf("reset_at after the interrupted wait: %v", st.ResetAt)
	}
}
