package step

import (
	"context"
	"fmt"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// What an earlier apply of the wave left on the runner's machine: the
// processes of its steps (found by the wave's mark, agent.WaveMark, or by
// a running step's recorded pid), the step cgroups its killed supervisors
// left, the files its killed sessions left in worktrees, and what those
// sessions spent.

// Leftovers is what EndLeftovers found and did. Ended counts the
// processes ended; Err says they could not all be ended; Remain says some
// of the wave's processes are still there (Leftover then looks for a
// lot's); Notes are lines for the journal.
type Leftovers struct {
	Ended  int
	Err    string
	Remain bool
	Notes  []string
}

// LeftoverRequest asks whether a process of an earlier apply's step of
// lot Lot is alive: the step's Kind and recorded PID (0: none running),
// and Remain, what EndLeftovers said.
type LeftoverRequest struct {
	Wave, WaveID, Lot string
	Kind              state.StepKind
	PID               int
	Remain            bool
}

// Leftover is Leftover's answer: Refuse says why the lot must not run now
// ("" when it may), Note a line for the journal (a process it ended).
type Leftover struct {
	Refuse string
	Note   string
}

// RecountRequest names a session that ran when its cadence was killed:
// the lot's agent (by name, spec.Agent.Name), the session's id, the folder
// it ran in and its log prefix; its step's Kind and the wave's WaveID
// (its lineage): a session with a browser (state.Info(Kind).Browser, the
// UX review) ran in its scratch folder (uxScratchDir), not in Dir.
type RecountRequest struct {
	Agent     string
	SessionID string
	Dir       string
	Log       string
	Kind      state.StepKind
	WaveID    string
}

// Recounter is an Agent that can count what a session cost after the
// cadence that ran it died (agent.Router does, through the adapter of the
// session's agent kind: agent.Adapter.Recount).
type Recounter interface {
	Recount(a *spec.Agent, sessionID, dir, logPrefix string) (agent.Spent, bool)
}

// Tidier is an Agent that can remove what sessions killed with their
// cadence left in worktrees and repositories (agent.Router does, through
// every adapter that is an agent.Tidier).
type Tidier interface {
	Tidy(t agent.Tidy) []string
}

// EndLeftovers ends every process an earlier apply of the wave (its id
// waveID; "" none yet) left running: SIGTERM, then SIGKILL after the
// grace, and it waits until they are gone; then the step cgroups killed
// supervisors left go (proc.TidyStepCgroups), and the scratch folders of
// the wave's killed UX sessions (tidyUXScratch). The caller holds the
// wave's lock, so no live apply owns them.
func (l *Local) EndLeftovers(_ context.Context, waveID string) (Leftovers, error) {
	var lo Leftovers
	if waveID == "" {
		lo.Notes = tidyCgroups(nil)
		return lo, nil
	}
	marks := []string{agent.WaveMark + "=" + waveID}
	n, err := proc.EndMarked(marks, proc.DefaultGrace)
	// One look at /proc for the wave's mark, so that Leftover looks for a
	// lot's (a look at every process) only when some are left.
	lo.Ended, lo.Remain = n, err != nil || len(proc.Marked(marks)) > 0
	switch {
	case err != nil:
		lo.Err = err.Error()
		lo.Notes = append(lo.Notes, fmt.Sprintf("could not end what an earlier apply of this wave left running: %v", err))
	case n > 0:
		lo.Notes = append(lo.Notes, fmt.Sprintf("ended %d processes an earlier apply of this wave left running", n))
	}
	lo.Notes = append(lo.Notes, tidyCgroups(marks)...)
	removed, err := tidyUXScratch(uxTempDir(), waveID)
	if len(removed) > 0 {
		lo.Notes = append(lo.Notes, fmt.Sprintf("removed %d UX scratch folders an earlier apply of this wave left", len(removed)))
	}
	if err != nil {
		lo.Notes = append(lo.Notes, fmt.Sprintf("could not remove the UX scratch folders an earlier apply of this wave left: %v", err))
	}
	return lo, nil
}

// tidyCgroups removes the step cgroups that supervisors killed with
// SIGKILL left: the empty ones, and those whose processes all carry marks
// (this wave's), after ending them. One that holds another's processes
// is named and kept. It returns the journal's lines.
func tidyCgroups(marks []string) []string {
	var notes []string
	removed, kept := proc.TidyStepCgroups(marks, false)
	if len(removed) > 0 {
		notes = append(notes, fmt.Sprintf("removed %d step cgroups that killed supervisors left", len(removed)))
	}
	for _, k := range kept {
		notes = append(notes, "kept a step cgroup a killed supervisor left: "+k)
	}
	return notes
}

// Leftover says whether lot req.Lot must not run now: a process of an
// earlier apply's step of the lot is still alive and could not be ended.
// It ends the process group of the lot's recorded running step first when
// its leader still carries the lot's marks (a step of a cadence that
// predates the wave mark); a live pid without them belongs to another
// process now and is left alone. Where processes cannot be inspected (no
// /proc), a live recorded pid refuses the lot.
func (l *Local) Leftover(_ context.Context, req LeftoverRequest) (Leftover, error) {
	if req.WaveID != "" && req.Remain {
		if left := proc.Marked([]string{agent.WaveMark + "=" + req.WaveID, agent.LotMark + "=" + req.Lot}); len(left) > 0 {
			return Leftover{Refuse: fmt.Sprintf("processes %v of an earlier apply of this lot are still running and could not be ended; stop them, then apply again", left)}, nil
		}
	}
	if req.PID <= 0 || !proc.Alive(req.PID) {
		return Leftover{}, nil
	}
	refuse := fmt.Sprintf("its %s step's process %d is still running (left by an earlier cadence); stop it, then apply again", req.Kind, req.PID)
	ours, known := proc.Carries(req.PID, agent.StepEnv(req.Wave, "", req.Lot))
	switch {
	case !known:
		return Leftover{Refuse: refuse}, nil
	case !ours:
		return Leftover{}, nil
	}
	if err := proc.EndGroup(req.PID, proc.DefaultGrace); err != nil {
		return Leftover{Refuse: refuse}, nil
	}
	return Leftover{Note: fmt.Sprintf("ended the %s step's process %d left running by an earlier apply", req.Kind, req.PID)}, nil
}

// Recount counts what the session req names spent, from what it left (its
// log, its CLI's records), once its processes are gone (EndLeftovers). ok
// is false when the agent cannot recount or the session left nothing.
func (l *Local) Recount(_ context.Context, req RecountRequest) (spent agent.Spent, ok bool, err error) {
	rc, can := l.agent.(Recounter)
	a := l.cfg.Agent(req.Agent)
	if !can || req.SessionID == "" || a == nil {
		return agent.Spent{}, false, nil
	}
	dir := req.Dir
	if info, _ := state.Info(req.Kind); info.Browser {
		dir = uxScratchDir(uxTempDir(), req.WaveID, req.SessionID)
	}
	spent, ok = rc.Recount(a, req.SessionID, dir, req.Log)
	return spent, ok, nil
}

// Tidy removes what sessions killed with their cadence left in the
// worktrees (files made before before), and returns what it removed.
func (l *Local) Tidy(_ context.Context, worktrees []string, before time.Time) ([]string, error) {
	td, ok := l.agent.(Tidier)
	if !ok {
		return nil, nil
	}
	return td.Tidy(agent.Tidy{Worktrees: worktrees, Before: before, Env: l.env}), nil
}
