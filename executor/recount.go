package executor

import (
	"context"
	"fmt"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
)

// Recounter is an Agent that can count what a session cost after the
// cadence that ran it died (step.Recounter).
type Recounter = step.Recounter

// recount counts the tokens of the agent session that was running as step
// i of lot n when cadence was killed (its outcome never recorded): what it
// left (its log, its CLI's records), read once its processes are gone
// (endLeftovers), through the step runner (step.Runner.Recount). It
// reports false for a step with no session, an agent that cannot
// recount, or a session that left nothing.
func (r *runner) recount(n *node, i int, s state.Step) (agent.Spent, bool) {
	if s.SessionID == "" || n.lot.Agent == nil || s.Usage != (state.Usage{}) {
		return agent.Spent{}, false
	}
	// the agent the step ran with (a state written before agents were
	// recorded per step ran every session with the lot's agent)
	name := s.Agent
	if name == "" {
		name = agentName(n.lot.Agent)
	}
	dir := r.o.Config.Dir
	if n.lot.Repo != nil {
		dir, _, _ = r.worktreesOf(n.lot)
	}
	spent, ok, err := r.steps.Recount(context.Background(), step.RecountRequest{Agent: name, SessionID: s.SessionID, Dir: dir,
		Log: r.o.Layout.StepFile(n.lot.ID, i, string(s.Kind), ""), Kind: s.Kind, WaveID: r.waveID()})
	return spent, ok && err == nil
}

// recountRunning gives the step of lot n that was running when cadence was
// killed the tokens and cost its session spent, and adds them to the
// wave's consumed totals and budget. The step is recorded first, then the
// wave: the step is no longer running afterwards, so a later apply never
// counts it again (a cadence killed between the two writes loses the
// wave's share rather than counting it twice).
func (r *runner) recountRunning(n *node) (spent agent.Spent, step int, ok bool) {
	var running *state.Step
	r.o.Store.View(func(st *state.State) {
		if l := st.Lots[n.lot.ID]; l != nil {
			for i, s := range l.Steps {
				if s.Status == state.StepRunning {
					step, running = i, &s
				}
			}
		}
	})
	if running == nil {
		return agent.Spent{}, 0, false
	}
	spent, ok = r.recount(n, step, *running)
	return spent, step, ok
}

// addRecounted adds a recounted session's spending to the wave.
func (r *runner) addRecounted(n *node, s agent.Spent) error {
	counted, micros, cacheRead := r.budget.add(s.Usage, s.CostMicros)
	r.emit(Event{Kind: EvOutput, Lot: n.lot.ID, Message: fmt.Sprintf("counted %d tokens of the session that ran when cadence stopped", s.Usage.Counted())})
	return r.o.Store.UpdateWave(func(st *state.State) {
		st.Consumed = state.Consumed{Counted: counted, CostMicros: micros, CacheRead: cacheRead,
			CostEstimated: st.Consumed.CostEstimated || s.CostEstimated}
	})
}
