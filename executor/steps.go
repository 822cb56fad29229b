package executor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// The orchestrator's side of the step seam (executor/step): every step
// runs through Options.Steps (step.Runner) from a step.Request the lot
// builds here; the lot writes the step's begin when the runner says it
// begins (step.EventBegin) and its end from the step.Result, and turns
// the result's incidents, warnings and held cause into the wave's and
// the lot's.

// IncidentCause starts the cause of a step (and so of its lot) that ended
// on a guarded-ref incident (guard.IncidentCause).
const IncidentCause = guard.IncidentCause

// setUpSteps makes the wave's guard, which the merge queue and the steps
// share, and the runner's step runner (Options.Steps, or a step.Local)
// from this machine's options: Git, Agent, Slots, Env, the supervisor and
// that guard.
func (r *runner) setUpSteps() {
	o := r.o
	r.guard = guard.New(o.Git, o.Config.Wave.Name, o.Config.Repos)
	lo := step.LocalOptions{Config: o.Config, Git: o.Git, Agent: o.Agent, Slots: o.Slots, Env: o.Env, Supervisor: o.Supervisor, Guard: r.guard,
		NoSandbox: o.NoStepSandbox, Home: o.Layout.Home()}
	if o.Layout.Home() != "" {
		// No session reads the machine's steering keys (control.MakeKey).
		if keys, err := filepath.Abs(o.Layout.KeysDir()); err == nil {
			lo.DenyRead = []string{keys}
		}
	}
	if o.Steps != nil {
		r.steps = o.Steps(lo)
	} else {
		r.steps = step.NewLocal(lo)
	}
}

// stepLot is the lot as a step request names it: the wave, the lot, its
// branch, and its repositories with their worktrees (own first).
func (lr *lotRun) stepLot() step.Lot {
	l := step.Lot{Wave: lr.r.o.Config.Wave.Name, WaveID: lr.r.waveID(), ID: lr.id, Branch: lr.branch}
	if lr.n.lot.Repo == nil {
		return l
	}
	for _, rp := range lr.n.lot.Repos() {
		r := step.Repo{Name: rp.Name, Worktree: lr.dirs[rp], Start: lr.bases[rp]}
		l.Repos = append(l.Repos, r)
	}
	return l
}

// look reads the lot's worktrees through the step runner (step.Runner.
// Look), by repository name; own limits it to the lot's own repository.
// A lot without a repository, or a request the runner cannot read, gives
// nothing (nil).
func (lr *lotRun) look(ctx context.Context, req step.LookRequest, own bool) map[string]step.Looked {
	req.Lot = lr.stepLot()
	if len(req.Repos) == 0 {
		return nil
	}
	if own {
		req.Repos = req.Repos[:1]
	}
	ls, err := lr.r.steps.Look(ctx, req)
	if err != nil {
		return nil
	}
	out := make(map[string]step.Looked, len(ls))
	for _, l := range ls {
		out[l.Repo] = l
	}
	return out
}

// guardLot is the lot as its guard sees it.
func (lr *lotRun) guardLot() guard.Lot {
	l := guard.Lot{ID: lr.id, Branch: lr.branch}
	if lr.n.lot.Repo == nil {
		return l
	}
	for _, rp := range lr.n.lot.Repos() {
		l.Repos = append(l.Repos, guard.Repo{Repo: rp, Dir: lr.dirs[rp]})
	}
	return l
}

// request is the step request of kind and pass for the lot, with what
// every step carries; the caller adds the step's own fields. NoSandbox
// says the wave file turns the step sandbox off for the lot's command
// steps (spec.Lot.StepSandboxOff); Writable are the folders its box may
// also write (spec.Lot.StepWritable).
func (lr *lotRun) request(kind state.StepKind, pass int) step.Request {
	return step.Request{Lot: lr.stepLot(), Kind: kind, Pass: pass, Dir: lr.dir,
		LogLimit: lr.n.lot.LogLimit, Limits: lr.n.lot.Limits, OutsideSandbox: lr.guardsCheckout(kind),
		NoSandbox: lr.n.lot.StepSandboxOff() != "", Writable: lr.n.lot.StepWritable()}
}

// ran is what the orchestrator learnt of a step while it ran: the index
// of the step it began (-1 until step.EventBegin) and the first error
// writing the journal.
type ran struct {
	index int
	err   error
}

// runStep runs req through the step runner and returns its result. It
// takes the runner's events in (stepEvents): the step's begin is written
// when the runner begins it (begin, which returns the step's index) and
// before anything of the step runs, its pid (and a session's id and HEAD)
// when it starts. It then records the result's wave incidents, held
// cause, warnings and backups.
func (lr *lotRun) runStep(ctx context.Context, req step.Request, begin func() (int, error)) (step.Result, ran, error) {
	r := lr.r
	events := &stepEvents{lr: lr, req: req, begin: begin, got: ran{index: -1}}
	res, err := r.steps.RunStep(ctx, req, events)
	got := events.end()
	if err != nil {
		return res, got, err
	}
	for _, in := range res.Incidents {
		r.incident(in)
	}
	if res.Held != "" {
		lr.held = res.Held
	}
	if len(res.Warnings) > 0 || len(res.Backups) > 0 {
		if err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
			l.Warnings = append(l.Warnings, res.Warnings...)
			l.Backups = append(l.Backups, res.Backups...)
		}); err != nil && got.err == nil {
			got.err = err
		}
	}
	if res.WriteFailed {
		r.machineStop(res.Cause)
	}
	return res, got, nil
}

// dirtyAll lists the uncommitted changes of all the lot's worktrees; a
// neighbour's are named repo:path.
func (lr *lotRun) dirtyAll(ctx context.Context) ([]string, error) {
	var all []string
	looked := lr.look(ctx, step.LookRequest{Dirty: true}, false)
	for _, rp := range lr.n.lot.Repos() {
		l, ok := looked[rp.Name]
		if !ok {
			return nil, fmt.Errorf("cannot read the worktree of repo %s", rp.Name)
		}
		if l.Err != "" {
			return nil, errors.New(l.Err)
		}
		for _, f := range l.Dirty {
			if rp != lr.n.lot.Repo {
				f = rp.Name + ":" + f
			}
			all = append(all, f)
		}
	}
	return all, nil
}

// guardsCheckout says whether a step of kind may run outside an OS
// sandbox: a command or a test gate (the step runner, which knows whether
// it ran one in its step sandbox, compares the checkouts only when it did
// not), or a session whose agent (the step's: planner.StepAgent) has
// sandbox = false, whose sandbox this machine lacks (the plan's facts of
// that agent), or whose file tools run outside it (bypassPermissions).
// The lead's checkouts are compared around such a step (guard/checkout.go).
func (lr *lotRun) guardsCheckout(kind state.StepKind) bool {
	if info, ok := state.Info(kind); ok && info.Runs == state.RunsCommand {
		return true
	}
	a, _, _ := planner.StepAgent(lr.n.lot, kind)
	if a == nil || a.NoSandbox || a.SandboxBypass() != "" {
		return true
	}
	return sandboxMissing(lr.r.o.Plan, a) != ""
}

// sandboxMissing is why a's OS sandbox cannot be used on this machine, as
// plan p found it (p.Agents; p.Agent for a plan that has no facts per
// agent); "" when it can, or p is nil.
func sandboxMissing(p *planner.Plan, a *spec.Agent) string {
	if p == nil {
		return ""
	}
	if f, ok := p.Agents[a.Name]; ok {
		return f.SandboxMissing
	}
	return p.Agent.SandboxMissing
}

// checkTips checks, before the lot's integration, that its branch is
// where its last step left it (guard.CheckTips); a move is put back and
// is the wave's incident.
func (lr *lotRun) checkTips(ctx context.Context) {
	for _, in := range lr.r.guard.CheckTips(ctx, lr.guardLot()) {
		lr.r.incident(in)
	}
}

// shellRepos are the repositories command, test or setup steps of the
// run's lots may use (their remotes are compared: guard.WatchRemotes):
// every repository of a command lot, and of an agent lot with a test gate
// or a setup command in any of its repositories.
func shellRepos(nodes []*node) []*spec.Repo {
	var out []*spec.Repo
	seen := map[*spec.Repo]bool{}
	for _, n := range nodes {
		if n.lot.Repo == nil || !hasShellSteps(n.lot) {
			continue
		}
		for _, rp := range n.lot.Repos() {
			if !seen[rp] {
				seen[rp] = true
				out = append(out, rp)
			}
		}
	}
	return out
}

// hasShellSteps says whether a lot runs commands, test gates or a
// worktree's setup command (watched as a command step is, its remotes
// with the command steps').
func hasShellSteps(l *spec.Lot) bool {
	if l.Kind == spec.CommandLot || l.Bootstrap.Setup != "" {
		return true
	}
	for _, rp := range l.Repos() {
		if rp.Test != "" || rp.Bootstrap.Setup != "" {
			return true
		}
	}
	return false
}

// compareRemotesAtEnd compares, once every lot has stopped, the remotes
// of the repositories where command or test steps ran since the last
// comparison; a change is the wave's incident. It runs whatever the
// context (a wave stopped by a signal is checked too).
func (r *runner) compareRemotesAtEnd(ctx context.Context) {
	if msg := r.guard.CompareAllRemotes(context.WithoutCancel(ctx)); msg != "" {
		r.incident("at the end of the wave, " + msg)
	}
}

// incidentErr ends a command or test step on an incident: the step is
// recorded failed, and the lot fails (stopOutcome).
type incidentErr struct{ Cause string }

func (e *incidentErr) Error() string { return e.Cause }

// incidentOutcome is the outcome of a step that ended on an incident
// (an *incidentErr): failed, with the cause.
func incidentOutcome(err error) (state.Outcome, bool) {
	var ie *incidentErr
	if !errors.As(err, &ie) {
		return state.Outcome{}, false
	}
	return state.Outcome{Kind: state.OutcomeFailed, Status: state.StepFailed, Detail: ie.Cause}, true
}

// agentName is the name of a lot's agent as a step request names it ("":
// a lot without one).
func agentName(a *spec.Agent) string {
	if a == nil {
		return ""
	}
	return a.Name
}

// stepEvents takes in the events of one step as the runner emits them
// (step.Events), one at a time: the step's begin is journalled before Emit
// returns (its error keeps the step from starting), then its pid (and a
// session's id and HEAD), its progress and notes are emitted, an incident
// found before it is the wave's. got is what was learnt; after end, an
// event is refused.
type stepEvents struct {
	lr    *lotRun
	req   step.Request
	begin func() (int, error)
	mu    sync.Mutex
	got   ran
	ended bool
}

// Emit implements step.Events.
func (s *stepEvents) Emit(e step.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return errors.New("an event after the step's end")
	}
	r, lr := s.lr.r, s.lr
	switch e.Kind {
	case step.EventBegin:
		if s.got.index < 0 && s.got.err == nil {
			s.got.index, s.got.err = s.begin()
		}
		return s.got.err
	case step.EventStarted:
		if s.got.index < 0 || s.got.err != nil {
			return s.got.err
		}
		i := s.got.index
		err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
			l.Steps[i].PID = e.PID
			if e.SessionID != "" {
				l.Steps[i].SessionID, l.Steps[i].HeadBefore = e.SessionID, e.HeadBefore
			}
			if e.Worker != "" {
				l.Steps[i].Remote = &state.RemoteStep{Worker: e.Worker, RunKey: e.RunKey, Delivery: e.Delivery, Heard: r.now()}
			}
		})
		if s.got.err == nil {
			s.got.err = err
		}
		return err
	case step.EventProgress:
		r.emit(Event{Kind: EvProgress, Lot: lr.id, Step: s.req.Kind, Pass: s.req.Pass, Model: s.req.Model, Usage: e.Usage})
		if e.Worker != "" && s.got.index >= 0 && s.got.err == nil {
			// A remote step's tokens so far and the time it was last
			// heard of, for status (state.RemoteStep).
			i := s.got.index
			s.got.err = r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
				rs := l.Steps[i].Remote
				if rs == nil || rs.Worker != e.Worker || rs.Delivery != e.Delivery {
					rs = &state.RemoteStep{Worker: e.Worker, RunKey: e.RunKey, Delivery: e.Delivery}
				}
				rs.Tokens, rs.Heard = e.Usage.Counted(), r.now()
				l.Steps[i].Remote = rs
			})
		}
	case step.EventNote, step.EventOutput:
		r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: s.req.Kind, Message: e.Text})
	case step.EventIncident:
		r.incident(e.Text)
	}
	return nil
}

// end refuses further events and returns what was learnt.
func (s *stepEvents) end() ran {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	return s.got
}
