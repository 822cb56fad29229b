package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/diskspace"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/planner/render"
	"github.com/cadence-run/cadence/spec"
	"golang.org/x/term"
)

func runApply(e *env, args []string) ExitCode {
	f := newPlanFlags(e, "apply", "[FILE|PLANFILE]", "Plan, confirm, and run the wave: every lot in its own worktree, agent sessions under the\nmachine's session cap, finished lots integrated into their base. Resumes where the last run stopped.")
	auto := f.Bool("auto-approve", false, "do not ask for confirmation (required without a terminal; a saved PLANFILE is never asked about)")
	ignoreQuota := f.Bool("ignore-quota", false, "start sessions even before the recorded reset time of the agent's usage limit")
	f.BoolVar(&f.upgrade, "upgrade", false, "go on with a wave started by another cadence: record this cadence's version and the agent CLI's in the state (without it, apply refuses)")
	f.executorFlag()
	f.DurationVar(&e.lockTimeout, "lock-timeout", 0, "wait up to this long (30s, 5m) for the wave's lock or a repository's lock held by another cadence, instead of refusing (0: refuse at once)")
	if code := refusePlanOnly(e, args, f.isBool); code >= 0 {
		return code
	}
	pos, code := f.parse(e, args)
	if code >= 0 {
		return code
	}
	if !f.lock {
		fmt.Fprintln(e.stderr, "cadence apply: -lock=false: ignored: apply always takes the wave's lock (two applies of one wave would run its lots twice and race on its state)")
	}
	if e.lockTimeout < 0 {
		fmt.Fprintln(e.stderr, "cadence apply: -lock-timeout must not be negative")
		return ExitApplyRefused
	}
	file, ok := oneFile(e, "apply", pos)
	if !ok {
		return ExitApplyRefused
	}
	// A saved plan (plan -out) runs as it was planned: its options replace
	// the flags, and -var or -var-file given again must match it.
	var saved *planner.SavedPlan
	var givenVars, givenVarFiles []string
	s, err := planner.ReadSaved(file)
	if err != nil && !errors.Is(err, planner.ErrNotSaved) && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
		return ExitApplyRefused
	}
	if errors.Is(err, planner.ErrNotSaved) && !isWaveFileName(file) {
		fmt.Fprintf(e.stderr, "cadence apply: %s is neither a wave file (*.hcl, *.hcl.json) nor a saved plan (plan -out): %v\n", file, err)
		return ExitApplyRefused
	}
	if err == nil {
		if code := refuseSavedOptions(e, f.FlagSet); code >= 0 {
			return code
		}
		saved = s
		file = s.WaveFile
		givenVars, givenVarFiles = f.vars, f.varFiles
		f.vars, f.varFiles, f.targets, f.replace = s.Vars, s.VarFiles, s.Targets, s.Replace
		f.maxSessions, f.jobs = s.MaxSessions, s.Jobs
		if s.Budget > 0 {
			f.budget = spec.Tokens(s.Budget).String()
		}
		if s.BudgetUSD > 0 {
			f.budgetUSD = spec.USD(s.BudgetUSD).String()
		}
	}
	if saved != nil {
		if code := refuseStale(e, saved.Stale(diskInputs(saved, givenVars)), saved.VarFiles, givenVarFiles); code >= 0 {
			return code
		}
	}
	if why := nestedWave(e.getenv); why != "" {
		fmt.Fprintf(e.stderr, "cadence apply: refused: %s\n", why)
		return ExitApplyRefused
	}
	// One apply per wave: take its lock before anything else (waiting up
	// to -lock-timeout for another apply of it to end), and hold it while
	// planning (the plan reads the state it guards) and running.
	started := time.Now()
	lay := e.layoutOf(file, "")
	waveLock, err := flock.AcquireTimeout(context.Background(), lay.Lock(), control.ApplyHolder(file, started),
		e.lockTimeout, e.waitingFor("the wave lock"))
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: another apply runs this wave: %v\n", err)
		return ExitApplyRefused
	}
	defer waveLock.Release()
	// Only the lead steers: a key of this apply's, which the steering
	// commands sign their requests with (executor/control, key.go).
	steerKey, leftKey, err := control.MakeKey(lay.SteerKey())
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: the steering key: %v\n", err)
		return ExitApplyRefused
	}
	defer func() { _ = control.RemoveKey(lay.SteerKey(), steerKey) }()
	// When this apply holds the wave: a stop request sent before it is
	// another run's (executor.Options.Since).
	locked := time.Now()
	w, p := f.makePlan(e, file, e.stderr)
	if p == nil {
		return ExitApplyRefused
	}
	_ = waveLock.SetHolder(flock.Holder{PID: os.Getpid(), Wave: w.cfg.Wave.Name, File: file, Since: started})
	if saved != nil {
		if code := refuseOffline(e, saved, p); code >= 0 {
			return code
		}
		if code := refuseStale(e, saved.Stale(currentInputs(context.Background(), gitint.NewGit(os.Environ()), saved, w, p, givenVars)), saved.VarFiles, givenVarFiles); code >= 0 {
			return code
		}
	}
	if !f.json {
		if err := render.Text(e.stdout, p, render.Options{Color: e.colorOn(e.stdout), CompactWarnings: e.compactWarnings}); err != nil {
			fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
			return ExitApplyRefused
		}
	}
	if refusals := p.Refusals(); len(refusals) > 0 {
		for _, r := range refusals {
			fmt.Fprintf(e.stderr, "cadence apply: refused: %s\n", r.Message)
		}
		return ExitApplyRefused
	}
	if p.Totals.PendingAgent+p.Totals.PendingCommand == 0 {
		if !f.json {
			fmt.Fprintln(e.stdout, "\nNothing to do.")
		}
		return exitFor(p)
	}
	quotaOut := e.stdout
	if f.json {
		quotaOut = e.stderr
	}
	quotaUntil, code := e.quotaGate(w, p, *ignoreQuota, time.Now(), quotaOut)
	if code >= 0 {
		return code
	}
	if _, err := e.apiBackoff(); err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
		return ExitApplyRefused
	}
	// A saved plan was the review (as Terraform's): apply runs it unasked.
	if !*auto && saved == nil {
		if !f.input {
			fmt.Fprintf(e.stderr, "cadence apply: -input=false: apply would ask to confirm the plan: add -auto-approve, or apply a saved plan (plan -out)\n")
			return ExitApplyRefused
		}
		if code := e.confirm(); code >= 0 {
			return code
		}
	}
	return e.execute(w, p, f, lay.Named(w.cfg.Wave.Name).WithWorktrees(w.cfg.Wave.Worktrees).Abs(), quotaUntil, locked, append([][]byte{steerKey}, keyList(leftKey)...))
}

// exitFor is the exit code of a plan with nothing to run: 0 when every lot
// is done, 1 when some lot needs the lead.
func exitFor(p *planner.Plan) ExitCode {
	if p.Totals.ByAction[planner.ActionDone] == p.Totals.Lots {
		return ExitOK
	}
	return ExitApplyNeedsLead
}

// confirm asks the lead; it returns goOn to go on, or an exit code.
func (e *env) confirm() ExitCode {
	in, ok := e.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		fmt.Fprintln(e.stderr, "cadence apply: no terminal to confirm on: add -auto-approve")
		return ExitApplyRefused
	}
	fmt.Fprint(e.stdout, "\nApply this plan? Only 'yes' goes on: ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintln(e.stdout, "Not applied.")
		return ExitApplyRefused
	}
	return goOn
}

// cadenceHome is $CADENCE_HOME, or ~/.cadence (layout.Home).
func (e *env) cadenceHome() string {
	userHome, _ := os.UserHomeDir()
	return layout.Home(e.getenv("CADENCE_HOME"), userHome)
}

// layoutOf is the layout of the wave in file, named name, on this machine.
func (e *env) layoutOf(file, name string) layout.Wave {
	return layout.New(file, name, e.cadenceHome())
}

// execute runs the plan (executor.Apply takes and gives back the locks,
// guards, store, slots and registry) and renders its end.
// quotaUntil is a recorded usage limit's reset time that sessions wait
// for (quotaGate), or nil. steerKeys are the apply's steering keys
// (executor.Options.SteerKeys).
func (e *env) execute(w *wave, p *planner.Plan, f *planFlags, lay layout.Wave, quotaUntil *time.Time, locked time.Time, steerKeys [][]byte) ExitCode {
	out := newProgress(e, f.json, lay.JournalLog())
	defer out.close()
	out.total, out.budget = p.Totals.PendingAgent+p.Totals.PendingCommand, int64(p.Totals.Budget)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := e.onSignals(cancel, out)
	defer sig.stop()

	// A process of a step whose supervisor died stays below cadence (it
	// is adopted, and ended), where the guards look for steps' processes.
	if err := proc.AdoptOrphans(nil); err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: cannot adopt the processes of steps whose supervisor dies (%v): such a process could pass for the lead's\n", err)
	}
	jobs := f.jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	// The steps' base environment: cadence's own, less git's location and
	// configuration variables (a git alias that runs cadence sets GIT_DIR).
	env := gitint.StepEnviron(os.Environ())
	// The repositories' git, for the steps' worktrees and for the guards
	// (whose lead-side hooks name the witness client).
	g := gitint.NewRepos(env)
	g.Git = guardGit(env)
	var host executor.Host = executor.SystemHost{Git: g.Git} // refuses a held repository lock at once
	if e.lockTimeout > 0 {
		host = waitingHost{SystemHost: executor.SystemHost{Git: g.Git}, ctx: ctx, timeout: e.lockTimeout, onHeld: e.waitingFor}
	}
	steps, closeEngine, err := e.remoteSteps(ctx, w.cfg, p, env)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: refused: %v\n", err)
		return ExitApplyRefused
	}
	defer closeEngine()
	apiBackoff, _ := e.apiBackoff()     // checked before the confirmation
	_, minFree, _ := e.freeThresholds() // checked by the plan
	res, err := executor.Apply(ctx, p, executor.ApplyOptions{
		Config: w.cfg, Layout: lay, WaveDigest: w.digest, Host: host,
		CadenceVersion: e.cadenceVersion(), AgentVersion: p.Agent.Version, Upgrade: f.upgrade,
		Agent: e.agentRunner(env), Env: env, Git: g, Supervisor: e.supervisor, Jobs: jobs, QuotaUntil: quotaUntil, APIBackoff: apiBackoff,
		FreePlaces: e.freePlaces(w), MinFree: minFree,
		Events: out.event,
		Warn:   func(msg string) { fmt.Fprintf(e.stderr, "cadence apply: %s\n", msg) },
		// Test only: CADENCE_FAILPOINT makes cadence kill itself at a named
		// point (executor.Options.Failpoint), to test its recovery.
		Failpoint: e.getenv("CADENCE_FAILPOINT"),
		// A stop sent before this apply took the wave lock is an earlier
		// run's: cleared (executor/steer.go).
		Since:     locked,
		SteerKeys: steerKeys,
		Steps:     steps,
	})
	out.stopLive()
	var setupErr *executor.SetupError
	if errors.As(err, &setupErr) {
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
		if sig.hard() {
			return ExitApplyInterrupted
		}
		return ExitApplyRefused
	}
	// A write of cadence's that failed for a full disk (the state, the
	// journal) is the machine's error: said with the free space, and the
	// apply is interrupted, to resume once there is room.
	full := diskspace.Full(err, "")
	switch {
	case full != nil:
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", full)
	case err != nil:
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
	case res.Machine != "":
		fmt.Fprintf(e.stderr, "cadence apply: %s\n", res.Machine)
	}
	if !f.json && res.State != nil {
		e.summary(w, p, res.State, res)
	}
	switch {
	case sig.hard(), full != nil, res.Machine != "":
		return ExitApplyInterrupted
	case res.Incident != "":
		return ExitApplyNeedsLead
	case res.Status == state.WaveInterrupted && ctx.Err() != nil:
		return ExitApplyInterrupted
	case res.Status == state.WaveSuspendedBudget || res.Status == state.WaveSuspendedQuota || res.Status == state.WaveSuspendedAPI:
		return ExitApplySuspended
	case err != nil:
		return ExitApplyNeedsLead
	case res.Lots[state.LotDone] == len(p.Lots) && p.Totals.ByAction[planner.ActionRefused] == 0:
		return ExitOK // a lot the plan refused was not run, even when an earlier run did it (-replace)
	}
	return ExitApplyNeedsLead
}

// agentRunner is the runner of agent sessions, with the environment of
// every session.
func (e *env) agentRunner(env []string) executor.Agent {
	agents := e.agents()
	return &agent.Router{Adapters: agents, Host: agent.Host{Env: env, NewSessionID: executor.NewSessionID, Supervisor: e.supervisor},
		Command: func(a *spec.Agent) string { return agentCommand(agents, a, e.getenv) }}
}

// stopSignals are the signals that stop a command that holds resources as
// SIGTERM does: SIGINT, SIGTERM and SIGHUP (the terminal closed). Every
// command of this package that handles one handles all of them.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signals maps the stop signals (stopSignals) to the run's context.
type signals struct {
	ch     chan os.Signal
	done   chan struct{}
	killed atomic.Bool
}

// onSignals makes the first stop signal (SIGINT, SIGTERM, SIGHUP) stop the run cleanly (no new
// step, running steps stopped, state saved) and the second stop it hard:
// every process group cadence started is killed at once (proc.KillAll),
// and the run still ends through its cleanup (push guards removed, locks
// and slots given back, state written) before apply exits 130. No signal
// ever ends cadence before that cleanup.
func (e *env) onSignals(cancel context.CancelFunc, out *progress) *signals {
	s := &signals{ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(s.ch, stopSignals...)
	go func() {
		select {
		case <-s.ch:
		case <-s.done:
			return
		}
		out.note("stopping: no new step starts, running steps are stopped (signal again to kill them at once)")
		cancel()
		for {
			select {
			case <-s.ch:
				proc.KillAll()
				if !s.killed.Swap(true) {
					fmt.Fprintln(e.stderr, "cadence: stopping at once: every step's processes killed; cleaning up")
				}
			case <-s.done:
				return
			}
		}
	}()
	return s
}

// hard reports whether a second signal came.
func (s *signals) hard() bool { return s.killed.Load() }

// stop ends the signal handling (the default action applies again).
func (s *signals) stop() {
	signal.Stop(s.ch)
	close(s.done)
}

// apiBackoff reads CADENCE_API_BACKOFF, the first wait before a step whose
// session met an overloaded API runs again (a Go duration such as "30s" or
// "200ms"; unset: executor.DefaultAPIBackoff, returned as 0).
func (e *env) apiBackoff() (time.Duration, error) {
	v := e.getenv("CADENCE_API_BACKOFF")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("CADENCE_API_BACKOFF=%q is not a positive duration: write one like 30s or 200ms", v)
	}
	return d, nil
}
