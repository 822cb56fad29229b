package executor

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// Recount makes the fake agent a Recounter when its recount is set.
func (a *fakeAgent) Recount(ag *spec.Agent, sessionID, dir, logPrefix string) (agent.Spent, bool) {
	if a.recount == nil {
		return agent.Spent{}, false
	}
	return a.recount(ag, sessionID, dir, logPrefix)
}

// TestRecoverRecountsRunningSession: a step whose session ran when
// cadence was killed gets the tokens its session spent, asked of the agent
// with the session's id, the lot's worktree and the step's log prefix; the
// wave's consumed totals count them (marked estimated), once.
func TestRecoverRecountsRunningSession(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
}
`+agentLots("a"))
	store, err := state.OpenStore(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	worktree := filepath.Join(h.dir, "wt-a")
	err = store.UpdateWave(func(st *state.State) {
		st.Wave, st.Consumed = "w", state.Consumed{Counted: 1000, CostMicros: 5000}
	})
	if err == nil {
		err = store.UpdateLot("a", func(l *state.Lot) {
			l.Status, l.Worktree = state.LotRunning, worktree
			l.Steps = []state.Step{{Kind: state.StepImplement, Status: state.StepRunning, SessionID: "sess-1"}}
		})
	}
	if err == nil {
		err = store.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	h.agent.recount = func(a *spec.Agent, id, dir, prefix string) (agent.Spent, bool) {
		calls = append(calls, id+" "+dir+" "+filepath.Base(prefix))
		return agent.Spent{Usage: state.Usage{Input: 100, Output: 20}, CostMicros: 800, CostEstimated: true}, true
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("res %+v err %v", res, err)
	}
	if len(calls) != 1 || calls[0] != "sess-1 "+worktree+" 0-implement" {
		t.Fatalf("recount calls %q", calls)
	}
	st, _, err := state.Read(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	s0 := st.Lots["a"].Steps[0]
	if s0.Status != state.StepInterrupted || s0.Usage != (state.Usage{Input: 100, Output: 20}) || s0.CostMicros != 800 || !s0.CostEstimated {
		t.Errorf("recounted step %+v", s0)
	}
	// 1000 before, 120 recounted, then the lot's sessions (15 each).
	var sessions int64
	for _, s := range st.Lots["a"].Steps[1:] {
		sessions += s.Usage.Counted()
	}
	if st.Consumed.Counted != 1000+120+sessions || st.Consumed.CostMicros < 5800 || !st.Consumed.CostEstimated {
		t.Errorf("consumed %+v (sessions %d)", st.Consumed, sessions)
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 {
		t.Errorf("a second apply recounted: %q", calls)
	}
}
