package step

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Local runs steps on this machine: commands through the step supervisor
// (internal/proc), sessions through the Agent, every step inside the
// guard (Guard.Before, Watch.After).
type Local struct {
	cfg   *spec.Config
	git   Git
	agent Agent
	slots Slots
	guard *guard.Guard
	env   []string
	sup   *Supervisor
	// hosts are the network hosts of each repository's remotes
	// (*spec.Repo -> []string), read once per Local: the config check
	// keeps the remotes as they were.
	hosts sync.Map
	// denyRead is LocalOptions.DenyRead.
	denyRead []string
	// prober says whether command steps can run in the OS sandbox here
	// (shellCmd).
	prober *box.Prober
	noBox  bool
	home   string
}

// LocalOptions are what a Local runs with. Config is the wave file (the
// repositories by name); Git, Agent and Slots (nil: no machine-wide
// session cap) do the work; Env is the environment every child process
// inherits, before the step's marks and the lot's entries; Supervisor is
// what every command step and setup runs under (nil: none, they run
// directly; sessions get theirs from the agent router's host).
type LocalOptions struct {
	Config     *spec.Config
	Git        Git
	Agent      Agent
	Slots      Slots
	Env        []string
	Supervisor *Supervisor
	// NoSandbox runs every command step outside the step sandbox, as on
	// a machine without one (the lead's checkouts compared around each):
	// for runners whose worktrees are no git worktrees (a fake Git).
	NoSandbox bool
	// Home is the cadence home (layout.Wave.Home: slots, holds, the
	// registry, the default worktrees folder): read-only in every step
	// sandbox, whatever a lot's sandbox_writable names; "" for none.
	Home string
	// Guard is the wave's guard on this machine (nil: a new one over
	// Git): the merge queue records cadence's own moves of the base in it,
	// so the runner of a wave that integrates is given the queue's.
	Guard *guard.Guard
	// DenyRead are files and folders no step may read: agent sessions
	// (agent.Session.DenyRead) and boxed commands (box.Spec.Hidden).
	DenyRead []string
	// Prober answers whether boxes run here (nil: one of the runner's
	// own): runners made one after another on one machine (a worker's,
	// one per job) share one, so the machine is probed once.
	Prober *box.Prober
}

// Supervisor is a step's supervisor (proc.Supervisor): the program that
// holds a step's process tree so that nothing of it outlives the step or
// cadence.
type Supervisor = proc.Supervisor

// NewLocal makes the local runner of one wave.
func NewLocal(o LocalOptions) *Local {
	g := o.Guard
	if g == nil {
		g = guard.New(o.Git, o.Config.Wave.Name, o.Config.Repos)
	}
	l := &Local{cfg: o.Config, git: o.Git, agent: o.Agent, slots: o.Slots, env: o.Env, sup: o.Supervisor, noBox: o.NoSandbox, home: o.Home, guard: g, denyRead: o.DenyRead, prober: o.Prober}
	if l.prober == nil {
		l.prober = new(box.Prober)
	}
	return l
}

// Guard is the wave's guard, shared by every step this runner runs: the
// merge queue records cadence's own ref moves in it (OwnMove, Moving,
// CheckTips).
func (l *Local) Guard() *guard.Guard { return l.guard }

var _ Runner = (*Local)(nil)

// KindSetup names a worktree's setup command (spec.Bootstrap.Setup) in a
// Request: run and guarded like a command step, but no step of the
// journal.
const KindSetup state.StepKind = "setup"

// RunStep runs the step req asks for (Runner.RunStep): a command (run,
// test, setup) or an agent session, as the step-kind table says.
func (l *Local) RunStep(ctx context.Context, req Request, events Events) (Result, error) {
	lot, err := l.guardLot(req.Lot)
	if err != nil {
		return Result{}, err
	}
	if req.Kind == KindSetup {
		return l.runSetup(ctx, req, lot, events), nil
	}
	info, ok := state.Info(req.Kind)
	if !ok {
		return Result{}, fmt.Errorf("step kind %q is not in the step-kind table", req.Kind)
	}
	switch info.Runs {
	case state.RunsCommand:
		return l.runCommand(ctx, req, lot, events), nil
	case state.RunsAgent:
		a := l.cfg.Agent(req.Agent)
		if a == nil {
			return Result{}, fmt.Errorf("%s step of lot %s: the wave file has no agent %q", req.Kind, req.ID, req.Agent)
		}
		if info.Browser {
			return l.runUX(ctx, req, lot, a, events), nil
		}
		return l.runSession(ctx, req, lot, a, events), nil
	}
	return Result{}, fmt.Errorf("a %s step is not run by a step runner", req.Kind)
}

// ResetForReplay puts the lot's worktree of repo back at commit to
// (Git.ResetForReplay), the lot marked as moved by cadence meanwhile.
func (l *Local) ResetForReplay(ctx context.Context, lot Lot, repo, to string) (string, error) {
	rp, dir, err := l.repoOf(lot, repo)
	if err != nil {
		return "", err
	}
	defer l.guard.Moving(lot.ID)()
	return l.git.ResetForReplay(ctx, rp, dir, lot.Wave, lot.ID, to)
}

// GuardEnv is Git.SessionEnv over every repository of the wave, added to
// the runner's inherited environment.
func (l *Local) GuardEnv(ctx context.Context) ([]string, error) {
	return l.git.SessionEnv(ctx, l.cfg.Repos, l.env), nil
}

// repoOf is the repository named repo of lot ("" its own) and the lot's
// worktree of it.
func (l *Local) repoOf(lot Lot, repo string) (*spec.Repo, string, error) {
	for i, r := range lot.Repos {
		if r.Name == repo || (repo == "" && i == 0) {
			rp := l.cfg.Repo(r.Name)
			if rp == nil {
				return nil, "", fmt.Errorf("lot %s: no repository %q in the wave file", lot.ID, r.Name)
			}
			return rp, r.Worktree, nil
		}
	}
	return nil, "", fmt.Errorf("lot %s has no repository %q", lot.ID, repo)
}

// guardLot is the guard's view of lot: its repositories by the wave
// file's name.
func (l *Local) guardLot(lot Lot) (guard.Lot, error) {
	g := guard.Lot{ID: lot.ID, Branch: lot.Branch}
	for _, r := range lot.Repos {
		rp := l.cfg.Repo(r.Name)
		if rp == nil {
			return guard.Lot{}, fmt.Errorf("lot %s: no repository %q in the wave file", lot.ID, r.Name)
		}
		g.Repos = append(g.Repos, guard.Repo{Repo: rp, Dir: r.Worktree})
	}
	return g, nil
}

// GuardLot is the guard's view of lot (its repositories found in the
// wave file), for the merge queue's checks (Guard.CheckTips).
func (l *Local) GuardLot(lot Lot) (guard.Lot, error) { return l.guardLot(lot) }

// stepEnv is the environment of a step's processes: the inherited one,
// the step's marks (agent.StepEnv), then the lot's entries.
func (l *Local) stepEnv(req Request) []string {
	return slices.Concat(l.env, agent.StepEnv(req.Wave, req.WaveID, req.ID), req.Env)
}

// stepMarks are the marks that single out the processes of one lot's step
// (proc.Cmd.Marks): the wave's id and the lot; none when the wave has no
// id yet.
func stepMarks(req Request) []string {
	if req.WaveID == "" {
		return nil
	}
	return []string{agent.WaveMark + "=" + req.WaveID, agent.LotMark + "=" + req.ID}
}

// remoteHosts are the network hosts of the remotes of repos
// (Git.RemoteHosts), sorted, each read once per Local.
func (l *Local) remoteHosts(ctx context.Context, repos []guard.Repo) []string {
	var all []string
	for _, r := range repos {
		h, ok := l.hosts.Load(r.Repo)
		if !ok {
			h, _ = l.hosts.LoadOrStore(r.Repo, l.git.RemoteHosts(context.WithoutCancel(ctx), []*spec.Repo{r.Repo}))
		}
		all = append(all, h.([]string)...)
	}
	return slices.Compact(slices.Sorted(slices.Values(all)))
}

// send emits e on events (nil: dropped); the receiver's error is of no
// consequence but for EventBegin (begin).
func send(events Events, e Event) {
	if events != nil {
		_ = events.Emit(e)
	}
}

// begin emits EventBegin; a non-empty cause says the receiver could not
// record it, and the step must not start (its Result: unstarted,
// interrupted with the cause).
func begin(events Events, kind state.StepKind) (cause string) {
	if events == nil {
		return ""
	}
	if err := events.Emit(Event{Kind: EventBegin}); err != nil {
		return fmt.Sprintf("the %s step was not started: its begin could not be recorded: %v", kind, err)
	}
	return ""
}

// guarded turns the guard's findings into events and the Result's
// incidents; it returns the step's incident cause ("" when none).
func guarded(res *Result, lotID string, f guard.Findings, events Events) string {
	for _, n := range f.Notes {
		send(events, Event{Kind: EventNote, Text: n})
	}
	res.Incidents = append(res.Incidents, f.Incidents...)
	if f.Held != "" {
		res.Held = f.Held
		res.Warnings = append(res.Warnings, f.Warning)
	}
	if f.Incident == "" {
		return ""
	}
	res.Incidents = append(res.Incidents, "lot "+lotID+": "+f.Incident)
	res.Incident = guard.IncidentCause + f.Incident
	return res.Incident
}

// before runs the guard's Before and reports what it found at once.
func (l *Local) before(ctx context.Context, lot guard.Lot, o guard.Options, events Events) *guard.Watch {
	w, f := l.guard.Before(ctx, lot, o)
	for _, n := range f.Notes {
		send(events, Event{Kind: EventNote, Text: n})
	}
	for _, in := range f.Incidents {
		send(events, Event{Kind: EventIncident, Text: in})
	}
	return w
}

// short is a commit's first 12 hex digits.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// shortOr is short(sha), or none when sha is empty.
func shortOr(sha, none string) string {
	if sha == "" {
		return none
	}
	return short(sha)
}

// joinCause is cause followed by note ("; "-joined), either maybe empty.
func joinCause(cause, note string) string {
	switch {
	case note == "":
		return cause
	case cause == "":
		return note
	}
	return cause + "; " + note
}
