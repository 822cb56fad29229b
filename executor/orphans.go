package executor

import (
	"fmt"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
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

// stepMarks are the marks that single out the processes of one lot's step
// of this run (proc.Cmd.Marks): the wave's id and the lot; none when the
// wave has no id yet.
func (r *runner) stepMarks(lot string) []string {
	id := r.waveID()
	if id == "" {
		return nil
	}
	return []string{agent.WaveMark + "=" + id, agent.LotMark + "=" + lot}
}

// endLeftovers ends every process that an earlier apply of this wave left
// running, found by the wave's mark (agent.WaveMark) whatever its lot:
// SIGTERM, then SIGKILL after the grace, and it waits until they are gone.
// This apply holds the wave's lock, so no live apply owns them. Under the
// step supervisor there are none once the supervisors have seen their
// cadence die (a few milliseconds); without it (other systems, a
// supervisor killed with cadence) this is what ends them. A process that
// cannot be ended keeps its lot from running (liveStep). Then the step
// cgroups killed supervisors left go (tidyCgroups).
func (r *runner) endLeftovers() {
	id := r.waveID()
	if id == "" {
		r.tidyCgroups(nil)
		return
	}
	defer r.tidyCgroups([]string{agent.WaveMark + "=" + id})
	n, err := proc.EndMarked([]string{agent.WaveMark + "=" + id}, proc.DefaultGrace)
	// One look at /proc for the wave's mark, so that liveStep looks for a
	// lot's (a look at every process) only when some are left: a wave of
	// thousands of lots would otherwise read /proc thousands of times.
	r.leftovers = err != nil || len(proc.Marked([]string{agent.WaveMark + "=" + id})) > 0
	switch {
	case err != nil:
		r.emit(Event{Kind: EvOutput, Message: fmt.Sprintf("could not end what an earlier apply of this wave left running: %v", err)})
	case n > 0:
		r.emit(Event{Kind: EvOutput, Message: fmt.Sprintf("ended %d processes an earlier apply of this wave left running", n)})
	}
}

// liveStep reports why lot id must not run now: a process of an earlier
// apply's step of the lot is still alive and could not be ended. It ends
// the process group of the lot's recorded running step first when its
// leader still carries the lot's marks (a step of a cadence that predates
// the wave mark); a live pid without them belongs to another process now
// and is left alone. Where processes cannot be inspected (no /proc), a
// live recorded pid refuses the lot, as it always did.
func (r *runner) liveStep(id string) string {
	if wid := r.waveID(); wid != "" && r.leftovers {
		if left := proc.Marked([]string{agent.WaveMark + "=" + wid, agent.LotMark + "=" + id}); len(left) > 0 {
			return fmt.Sprintf("processes %v of an earlier apply of this lot are still running and could not be ended; stop them, then apply again", left)
		}
	}
	var s state.Step
	r.o.Store.View(func(st *state.State) {
		if l := st.Lots[id]; l != nil && len(l.Steps) > 0 {
			s = l.Steps[len(l.Steps)-1]
		}
	})
	if s.Status != state.StepRunning || s.PID <= 0 || !proc.Alive(s.PID) {
		return ""
	}
	refuse := fmt.Sprintf("its %s step's process %d is still running (left by an earlier cadence); stop it, then apply again", s.Kind, s.PID)
	ours, known := proc.Carries(s.PID, agent.StepEnv(r.o.Config.Wave.Name, "", id))
	switch {
	case !known:
		return refuse
	case !ours:
		return ""
	}
	if err := proc.EndGroup(s.PID, proc.DefaultGrace); err != nil {
		return refuse
	}
	r.emit(Event{Kind: EvOutput, Lot: id, Message: fmt.Sprintf("ended the %s step's process %d left running by an earlier apply", s.Kind, s.PID)})
	return ""
}

// tidyCgroups removes the step cgroups that supervisors killed with
// SIGKILL left (proc.TidyStepCgroups): the empty ones, and those whose
// processes all carry marks (this wave's), after ending them. One that
// holds another's processes is named and kept.
func (r *runner) tidyCgroups(marks []string) {
	removed, kept := proc.TidyStepCgroups(marks, false)
	if len(removed) > 0 {
		r.emit(Event{Kind: EvOutput, Message: fmt.Sprintf("removed %d step cgroups that killed supervisors left", len(removed))})
	}
	for _, k := range kept {
		r.emit(Event{Kind: EvOutput, Message: "kept a step cgroup a killed supervisor left: " + k})
	}
}
