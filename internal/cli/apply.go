package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/planner/render"
	"github.com/cadence-run/cadence/spec"
	"golang.org/x/term"
)

// apply's exit codes (DESIGN.md §2).
const (
	exitNeedsLead   = 1
	exitRefused     = 2
	exitSuspended   = 3
	exitInterrupted = 130
)

func runApply(e *env, args []string) int {
	f := newPlanFlags(e, "apply", "[FILE|PLANFILE]", "Plan, confirm, and run the wave: every lot in its own worktree, agent sessions under the\nmachine's session cap, finished lots integrated into their base. Resumes where the last run stopped.")
	auto := f.Bool("auto-approve", false, "do not ask for confirmation (required without a terminal)")
	pos, code := f.parse(e, args)
	if code >= 0 {
		return code
	}
	file, ok := oneFile(e, "apply", pos)
	if !ok {
		return exitRefused
	}
	var saved *planner.SavedPlan
	if s, err := planner.ReadSaved(file); err == nil {
		saved = s
		file = s.WaveFile
		f.vars, f.varFiles, f.targets, f.replace = s.Vars, s.VarFiles, s.Targets, s.Replace
		f.maxSessions, f.jobs, f.offline = s.MaxSessions, s.Jobs, false
		if s.Budget > 0 {
			f.budget = spec.Tokens(s.Budget).String()
		}
	}
	if f.offline {
		fmt.Fprintln(e.stderr, "cadence apply: -offline is for plan only: apply needs the repositories and the agent")
		return exitRefused
	}
	// One apply per wave: take its lock before anything else.
	started := time.Now()
	waveLock, err := flock.TryAcquire(state.PathFor(file)+".lock", flock.Holder{PID: os.Getpid(), File: file, Since: started, What: "apply"})
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: another apply runs this wave: %v\n", err)
		return exitRefused
	}
	defer waveLock.Release()
	w, p := f.makePlan(e, file, e.stderr)
	if p == nil {
		return exitRefused
	}
	_ = waveLock.SetHolder(flock.Holder{PID: os.Getpid(), Wave: w.cfg.Wave.Name, File: file, Since: started})
	if saved != nil {
		bases := map[string]string{}
		for _, r := range p.Repos {
			if r.BaseSHA != "" {
				bases[r.Name] = r.BaseSHA
			}
		}
		if why := saved.Stale(w.digest, w.stateDigest, bases); len(why) > 0 {
			fmt.Fprintf(e.stderr, "cadence apply: the saved plan is stale: %s. Plan again.\n", strings.Join(why, "; "))
			return exitRefused
		}
	}
	if !f.json {
		if err := render.Text(e.stdout, p, render.Options{Color: e.colorOn(e.stdout)}); err != nil {
			fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
			return exitRefused
		}
	}
	if refusals := p.Refusals(); len(refusals) > 0 {
		for _, r := range refusals {
			fmt.Fprintf(e.stderr, "cadence apply: refused: %s\n", r.Message)
		}
		return exitRefused
	}
	if p.Totals.PendingAgent+p.Totals.PendingCommand == 0 {
		if !f.json {
			fmt.Fprintln(e.stdout, "\nNothing to do.")
		}
		return exitFor(p)
	}
	if !*auto {
		if code := e.confirm(); code >= 0 {
			return code
		}
	}
	return e.execute(w, p, f)
}

// exitFor is the exit code of a plan with nothing to run: 0 when every lot
// is done, 1 when some lot needs the lead.
func exitFor(p *planner.Plan) int {
	if p.Totals.ByAction[planner.ActionDone] == p.Totals.Lots {
		return ExitOK
	}
	return exitNeedsLead
}

// confirm asks the lead; it returns -1 to go on, or an exit code.
func (e *env) confirm() int {
	in, ok := e.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		fmt.Fprintln(e.stderr, "cadence apply: no terminal to confirm on: add -auto-approve")
		return exitRefused
	}
	fmt.Fprint(e.stdout, "\nApply this plan? Only 'yes' goes on: ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintln(e.stdout, "Not applied.")
		return exitRefused
	}
	return -1
}

// cadenceHome is $CADENCE_HOME, or ~/.cadence.
func (e *env) cadenceHome() string {
	if h := e.getenv("CADENCE_HOME"); h != "" {
		return h
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cadence")
	}
	return filepath.Join(os.TempDir(), "cadence")
}

// execute takes the locks and runs the plan.
func (e *env) execute(w *wave, p *planner.Plan, f *planFlags) int {
	cfg := w.cfg
	statePath := state.PathFor(w.file)
	holder := flock.Holder{PID: os.Getpid(), Wave: cfg.Wave.Name, File: w.file, Since: time.Now()}
	repoLocks, code := e.lockRepos(w, p, holder)
	defer func() {
		for _, l := range repoLocks {
			l.Release()
		}
	}()
	if code >= 0 {
		return code
	}
	guards, code := e.installGuards(w, p)
	defer func() {
		for _, remove := range guards {
			if err := remove(); err != nil {
				fmt.Fprintf(e.stderr, "cadence apply: could not remove the push guard: %v (cadence clean removes it)\n", err)
			}
		}
	}()
	if code >= 0 {
		return code
	}
	store, err := state.OpenStore(statePath)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
		return exitRefused
	}
	defer store.Close()
	if err := store.UpdateWave(func(st *state.State) {
		if st.Lineage == "" {
			st.Lineage = newLineage()
		}
		st.Wave, st.WaveDigest = cfg.Wave.Name, w.digest
	}); err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
		return exitRefused
	}
	home := e.cadenceHome()
	pool, err := slots.Open(filepath.Join(home, "slots"), p.Totals.MaxSessions)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: session slots: %v\n", err)
		return exitRefused
	}
	defer pool.Close()
	reg, err := slots.Register(filepath.Join(home, "waves"), slots.WaveEntry{PID: os.Getpid(), Wave: cfg.Wave.Name,
		File: absPath(w.file), StateFile: absPath(statePath), Started: time.Now(), MaxSessions: p.Totals.MaxSessions, Status: "running"})
	if err == nil {
		defer reg.Close()
	}
	bs, err := briefs.Load(cfg.Wave.Templates)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
		return exitRefused
	}
	workDir := filepath.Join(cfg.Dir, ".cadence")
	if err := os.MkdirAll(workDir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(workDir, ".gitignore"), []byte("*\n"), 0o644)
	}
	out := newProgress(e, f.json, filepath.Join(workDir, cfg.Wave.Name, "journal.log"))
	defer out.close()
	out.total, out.budget = p.Totals.PendingAgent+p.Totals.PendingCommand, int64(p.Totals.Budget)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopSignals := e.onSignals(cancel, out)
	defer stopSignals()

	jobs := f.jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	env := os.Environ()
	res, err := executor.Run(ctx, executor.Options{
		Config: cfg, Plan: p, Store: store, Git: gitint.NewRepos(), Briefs: bs,
		Agent: &agent.Router{Host: agent.Host{Env: env, NewSessionID: executor.NewSessionID},
			Command: func(a *spec.Agent) string { return agentCommand(a, e.getenv) }},
		Slots: poolSlots{pool: pool, wave: cfg.Wave.Name},
		Env:   env, WorkDir: workDir,
		MaxSessions: p.Totals.MaxSessions, Jobs: jobs,
		Budget: int64(p.Totals.Budget), BudgetUSDMicros: int64(p.Totals.BudgetUSD),
		Events: out.event,
	})
	out.stopLive()
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence apply: %v\n", err)
	}
	var final *state.State
	store.View(func(st *state.State) { final = cloneState(st) })
	if !f.json {
		e.summary(w, p, final, res)
	}
	switch {
	case res.Incident != "":
		return exitNeedsLead
	case res.Status == state.WaveInterrupted && ctx.Err() != nil:
		return exitInterrupted
	case res.Status == state.WaveSuspendedBudget || res.Status == state.WaveSuspendedQuota:
		return exitSuspended
	case err != nil:
		return exitNeedsLead
	case res.Lots[state.LotDone] == len(p.Lots):
		return ExitOK
	}
	return exitNeedsLead
}

// lockRepos takes the one-wave-per-repository lock of every repository the
// pending lots use.
func (e *env) lockRepos(w *wave, p *planner.Plan, h flock.Holder) ([]*flock.Lock, int) {
	used := usedRepos(p)
	var locks []*flock.Lock
	for _, r := range w.cfg.Repos {
		if !used[r.Name] {
			continue
		}
		f, err := gitint.Inspect(context.Background(), r.Path, r.Base)
		if err != nil || f.CommonDir == "" {
			fmt.Fprintf(e.stderr, "cadence apply: repo %s: cannot find its git folder: %v\n", r.Name, err)
			return locks, exitRefused
		}
		h.What = "repo " + r.Name
		l, err := flock.TryAcquire(filepath.Join(f.CommonDir, "cadence", "repo.lock"), h)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence apply: repo %s is used by another wave: %v\n", r.Name, err)
			return locks, exitRefused
		}
		locks = append(locks, l)
	}
	return locks, -1
}

// installGuards puts cadence's pre-push hook in every repository the
// pending lots use, for the run's duration.
func (e *env) installGuards(w *wave, p *planner.Plan) ([]func() error, int) {
	used := usedRepos(p)
	var removes []func() error
	for _, r := range w.cfg.Repos {
		if !used[r.Name] {
			continue
		}
		remove, err := gitint.InstallGuard(context.Background(), r.Path)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence apply: repo %s: %v\n", r.Name, err)
			return removes, exitRefused
		}
		removes = append(removes, remove)
	}
	return removes, -1
}

// usedRepos names the repositories of the plan's pending lots.
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

// onSignals makes the first SIGINT or SIGTERM stop the run cleanly (no new
// step, running ones stopped, state saved) and the second end it at once.
func (e *env) onSignals(cancel context.CancelFunc, out *progress) func() {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
		case <-done:
			return
		}
		out.note("stopping: no new step starts, running steps are stopped (signal again to quit at once)")
		cancel()
		select {
		case <-ch:
			proc.KillAll()
			fmt.Fprintln(e.stderr, "cadence: stopped at once")
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// poolSlots adapts the slot pool to the executor.
type poolSlots struct {
	pool *slots.Pool
	wave string
}

// Acquire implements executor.Slots.
func (s poolSlots) Acquire(ctx context.Context, lot string, step state.StepKind) (func(), error) {
	sl, err := s.pool.Acquire(ctx, slots.Holder{Wave: s.wave, Lot: lot, Step: string(step)})
	if err != nil {
		return nil, err
	}
	return func() { _ = sl.Release() }, nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func newLineage() string {
	b := make([]byte, 16)
	if f, err := os.Open("/dev/urandom"); err == nil {
		_, _ = f.Read(b)
		f.Close()
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func cloneState(st *state.State) *state.State {
	c := *st
	c.Lots = make(map[string]*state.Lot, len(st.Lots))
	for k, v := range st.Lots {
		l := *v
		c.Lots[k] = &l
	}
	return &c
}
