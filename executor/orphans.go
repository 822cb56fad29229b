package executor

import (
	"context"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
)

// waveID is the wave's id on this machine, the mark of its steps'
// processes: its state's lineage ("" when the state has none yet).
func (r *runner) waveID() string {
	var id string
	r.o.Store.View(func(st *state.State) { id = st.Lineage })
	return id
}

// stepEnv is the environment entries that mark the processes of a step of
// lot (agent.StepEnv).
func (r *runner) stepEnv(lot string) []string {
	return agent.StepEnv(r.o.Config.Wave.Name, r.waveID(), lot)
}

// endLeftovers ends, through the step runner (step.Runner.EndLeftovers),
// every process that an earlier apply of this wave left running, found by
// the wave's mark whatever its lot, and the step cgroups killed
// supervisors left. A process that cannot be ended keeps its lot from
// running (liveStep).
func (r *runner) endLeftovers() {
	lo, err := r.steps.EndLeftovers(context.Background(), r.waveID())
	if err != nil {
		r.emit(Event{Kind: EvOutput, Message: "could not look for what an earlier apply of this wave left running: " + err.Error()})
		r.leftovers = true
		return
	}
	r.leftovers = lo.Remain
	for _, n := range lo.Notes {
		r.emit(Event{Kind: EvOutput, Message: n})
	}
}

// liveStep reports why lot id must not run now: a process of an earlier
// apply's step of the lot is still alive and could not be ended
// (step.Runner.Leftover, given the lot's recorded running step).
func (r *runner) liveStep(id string) string {
	var s state.Step
	r.o.Store.View(func(st *state.State) {
		if l := st.Lots[id]; l != nil && len(l.Steps) > 0 {
			s = l.Steps[len(l.Steps)-1]
		}
	})
	req := step.LeftoverRequest{Wave: r.o.Config.Wave.Name, WaveID: r.waveID(), Lot: id, Kind: s.Kind, Remain: r.leftovers}
	if s.Status == state.StepRunning {
		req.PID = s.PID
	}
	left, err := r.steps.Leftover(context.Background(), req)
	if err != nil {
		return "cannot tell whether an earlier apply's step of the lot still runs: " + err.Error()
	}
	if left.Note != "" {
		r.emit(Event{Kind: EvOutput, Lot: id, Message: left.Note})
	}
	return left.Refuse
}
