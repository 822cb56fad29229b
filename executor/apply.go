package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cadence-run/cadence/internal/diskspace"

	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/ids"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// ApplyOptions configure Apply: the wave, its layout, and what the run
// needs from the caller (the agent runner, the environment, the caps).
type ApplyOptions struct {
	Config *spec.Config
	// Layout names the wave's files; its home holds the machine's slots
	// and registry.
	Layout layout.Wave
	// WaveDigest is the wave file's digest, recorded in the state.
	WaveDigest string
	Agent      Agent
	// Git is git for the run (nil: step.NewGit(Env)).
	Git Git
	// Host takes and gives back the locks, guards, store, slots and
	// registry (nil: SystemHost with git starting from Env, the real ones).
	Host Host
	// Env is the environment of every child process.
	Env []string
	// Supervisor is what every command step and setup runs under
	// (Options.Supervisor).
	Supervisor *step.Supervisor
	// Steps makes the run's step runner (Options.Steps; nil: step.Local).
	Steps func(step.LocalOptions) step.Runner
	// Jobs caps command lots in this process.
	Jobs int
	// FreePlaces and MinFree are the free-space floor checked before each
	// lot starts (Options.MinFree).
	FreePlaces []diskspace.Place
	MinFree    uint64
	// QuotaUntil, when set, is a recorded usage limit's reset time that
	// sessions wait for (on_quota = "wait"; Options.QuotaUntil).
	QuotaUntil *time.Time
	// APIBackoff is Options.APIBackoff.
	APIBackoff time.Duration
	// Events receives progress events; it must be safe for concurrent use.
	Events func(Event)
	// Warn receives what goes wrong without stopping the run, one sentence
	// each: the registry could not be joined, a push guard or the state
	// file could not be put away at the end. Nil drops them.
	Warn func(string)
	// Now is the clock (tests).
	Now func() time.Time
	// Failpoint is Options.Failpoint (tests only).
	Failpoint string
	// Since is Options.Since: when the caller took the wave lock.
	Since time.Time
	// CadenceVersion and AgentVersion are the versions of cadence (as
	// `cadence version` says it) and of the agent CLI (its version probe's
	// answer, planner.Plan.Agent.Version; "" when none was probed) that run
	// the wave. The state records them at the wave's first apply
	// (state.State.CadenceVersion, AgentVersion) and keeps them after,
	// unless Upgrade (apply -upgrade), which records these instead; an
	// unknown ("") version never replaces a recorded one. Refusing another
	// cadence is the plan's (planner.WarnCadenceChanged).
	CadenceVersion, AgentVersion string
	Upgrade                      bool

	// run replaces Run (tests).
	run func(context.Context, Options) (Result, error)
}

// SetupError is an error on Apply's way in: nothing ran, and everything
// Apply had taken was given back. (An error of the run itself is returned
// as it is, with the Result.)
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// Apply runs a plan the way `cadence apply` does, owning everything around
// the run. In order, it takes the one-wave-per-repository lock of every
// repository the plan's pending lots use, installs cadence's guard in each
// (Host.InstallGuard: the hooks and push-blocking config every lot
// worktree gets; runLot puts each worktree under it as it is made),
// removes the guard a killed apply left in any other repository of the
// wave whose lock is free (Host.RemoveLeftGuard), opens the state store (recording the wave's name, digest and, the
// first time, a lineage), joins the machine's session slot pool (size
// Plan.Totals.MaxSessions) and its registry of live waves, loads the
// briefs, makes the work folder, and runs the plan (Run). Whatever way it
// returns (an error on the way in, the run's end, an error of the run, a
// panic) it gives back everything it took, in the reverse order: the
// registration, the slots, the store (the state written whole), the
// guards, the repository locks. A failure on the way in is a *SetupError.
//
// The wave lock (Layout.Lock) is the caller's: it must be held while the
// plan is made (the plan is read from the state that lock guards), so the
// caller takes it before planning and releases it after Apply returns.
//
// A failed registry call does not stop the wave: the registry only tells
// `cadence status` which waves are live on the machine (the session cap is
// the slot pool's), so Apply warns through Warn, naming what is lost, and
// runs. A guard or store that cannot be put away at the end is a warning
// too (the guard is found by `cadence clean`; the state's journal keeps
// every transition and is replayed by the next read).
//
// ctx stops the run as Run describes; the setup and the release are not
// cut short by it. Result.State is a copy of the state at the end.
func Apply(ctx context.Context, p *planner.Plan, o ApplyOptions) (res Result, err error) {
	host := o.Host
	if host == nil {
		host = step.NewSystemHost(o.Env)
	}
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	cfg := o.Config
	// Releases run in reverse order, on every path.
	var releases []func()
	defer func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}()
	setup := context.WithoutCancel(ctx)
	used := usedRepos(p)
	// The wave file's absolute path: what tells this wave from another
	// of its name (in another folder) that holds a repository.
	holder := flock.Holder{PID: os.Getpid(), Wave: cfg.Wave.Name, File: o.Layout.Abs().File(), Since: now()}
	for _, r := range cfg.Repos {
		if !used[r.Name] {
			continue
		}
		h := holder
		h.What = "repo " + r.Name
		release, err := host.LockRepo(setup, r, h)
		if err != nil {
			return Result{}, &SetupError{err}
		}
		releases = append(releases, release)
	}
	var usedList []*spec.Repo
	for _, r := range cfg.Repos {
		if used[r.Name] {
			usedList = append(usedList, r)
		}
	}
	// What sessions killed with an earlier cadence left (an empty
	// config.lock would fail the guard's git config) goes first.
	for _, msg := range tidyRepos(o.Agent, usedList, holder.Since, o.Env) {
		warn(msg)
	}
	for _, r := range cfg.Repos {
		if !used[r.Name] {
			continue
		}
		remove, err := host.InstallGuard(setup, r)
		if err != nil {
			return Result{}, &SetupError{fmt.Errorf("repo %s: %w", r.Name, err)}
		}
		releases = append(releases, func() {
			if err := remove(); err != nil {
				warn(fmt.Sprintf("could not remove the push guard: %v (cadence clean removes it)", err))
			}
		})
	}
	// A guard a killed apply left in a repository where no lot of this
	// run works (its lots all done) is removed now: nothing else would
	// (docs/integration.md, Guards).
	for _, r := range cfg.Repos {
		if used[r.Name] {
			continue
		}
		h := holder
		h.What = "repo " + r.Name
		removed, err := host.RemoveLeftGuard(setup, r, h)
		switch {
		case err != nil:
			warn(fmt.Sprintf("could not remove the push guard a killed cadence left in repo %s: %v (cadence clean removes it)", r.Name, err))
		case removed:
			warn(fmt.Sprintf("removed the push guard a killed cadence left in repo %s (no lot runs there)", r.Name))
		}
	}
	store, err := host.OpenStore(o.Layout.StateFile())
	if err != nil {
		return Result{}, &SetupError{err}
	}
	releases = append(releases, func() {
		if err := store.Close(); err != nil {
			warn(fmt.Sprintf("could not write the state file whole: %v (its journal keeps every transition)", err))
		}
	})
	if err := store.UpdateWave(func(st *state.State) {
		if st.Lineage == "" {
			st.Lineage = newLineage()
		}
		st.Wave, st.WaveDigest = cfg.Wave.Name, o.WaveDigest
		pin(st, o.CadenceVersion, o.AgentVersion, o.Upgrade)
	}); err != nil {
		return Result{}, &SetupError{err}
	}
	pool, err := host.OpenSlots(o.Layout.SlotsDir(), p.Totals.MaxSessions, cfg.Wave.Name)
	if err != nil {
		return Result{}, &SetupError{fmt.Errorf("session slots: %w", err)}
	}
	releases = append(releases, func() { _ = pool.Close() })
	reg, err := host.Register(o.Layout.RegistryDir(), slots.WaveEntry{Wave: cfg.Wave.Name,
		File: absPath(o.Layout.File()), StateFile: absPath(o.Layout.StateFile()), Started: now(),
		MaxSessions: p.Totals.MaxSessions, Status: "running"})
	if err != nil {
		warn(fmt.Sprintf("this wave is not in the machine's registry of live waves (%v): cadence status will not list it; the session cap still holds", err))
	} else {
		releases = append(releases, func() { _ = reg.Close() })
	}
	bs, err := briefs.Load(cfg.Wave.Templates)
	if err != nil {
		return Result{}, &SetupError{err}
	}
	if err := o.Layout.MakeWorkDir(); err != nil {
		warn(err.Error())
	}
	g := o.Git
	if g == nil {
		g = step.NewGit(o.Env)
	}
	run := o.run
	if run == nil {
		run = Run
	}
	res, err = run(ctx, Options{
		Config: cfg, Plan: p, Store: store, Git: g, Briefs: bs, Agent: o.Agent,
		Slots: pool, Env: o.Env, Supervisor: o.Supervisor, Steps: o.Steps, Layout: o.Layout,
		MaxSessions: p.Totals.MaxSessions, Jobs: o.Jobs, FreePlaces: o.FreePlaces, MinFree: o.MinFree,
		Budget: int64(p.Totals.Budget), BudgetUSDMicros: int64(p.Totals.BudgetUSD),
		QuotaUntil: o.QuotaUntil, APIBackoff: o.APIBackoff, Events: o.Events, Now: o.Now, Failpoint: o.Failpoint, Since: o.Since,
	})
	store.View(func(st *state.State) { res.State = cloneState(st) })
	return res, err
}

// pin records the versions of the tool running the wave in its state:
// each one the state does not record yet, or every known one with upgrade.
func pin(st *state.State, cadence, agent string, upgrade bool) {
	cadence, agent = state.ClipVersion(cadence), state.ClipVersion(agent)
	if cadence != "" && (st.CadenceVersion == "" || upgrade) {
		st.CadenceVersion = cadence
	}
	if agent != "" && (st.AgentVersion == "" || upgrade) {
		st.AgentVersion = agent
	}
}

// usedRepos names the repositories of the plan's pending lots (their own
// and their neighbours).
func usedRepos(p *planner.Plan) map[string]bool {
	used := map[string]bool{}
	for _, lp := range p.Lots {
		if lp.Action.Pending() && lp.Repo != "" {
			used[lp.Repo] = true
			for _, a := range lp.Also {
				used[a] = true
			}
		}
	}
	return used
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// newLineage is a random UUID, recorded once per state file.
func newLineage() string { return ids.UUID() }

// cloneState copies the state and its lots (not deeper: the caller only
// reads it).
func cloneState(st *state.State) *state.State {
	c := *st
	c.Lots = make(map[string]*state.Lot, len(st.Lots))
	for k, v := range st.Lots {
		l := *v
		c.Lots[k] = &l
	}
	return &c
}
