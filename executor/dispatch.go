package executor

import (
	"context"
	"sync"
	"time"

	"github.com/cadence-run/cadence/executor/mergequeue"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
	"golang.org/x/sync/errgroup"
)

// node is a lot this run may start.
type node struct {
	lot *spec.Lot
	// plan is the lot's in the run's plan (Options.Plan.Lots): shared, not
	// copied (a copy is most of a node's bytes); read only.
	plan       *planner.LotPlan
	waiting    int // dependencies not done yet
	dependents []*node
	started    bool
	finished   bool
	blockedBy  string // set when a dependency failed: never started
	// heldSession is set while the lot holds the session unit the
	// dispatcher took for it, for its first session.
	heldSession bool
	// queued is set (by the dispatcher) once the lot waits in its
	// repository's merge queue: it gave back its place under parallel
	// and -jobs (queue.go: enqueueIntegrate).
	queued bool
	// steer is the lead's word on the lot once started (steer.go).
	steer nodeSteer
}

// finish is a lot goroutine's report to the dispatcher.
type finish struct {
	n      *node
	status state.LotStatus
}

// runner is one run of the executor.
type runner struct {
	// Who owns each field: "start" fields are set by Run before the
	// dispatcher's loop begins and only read after; "dispatcher" fields are
	// touched by the dispatcher's goroutine (runner.loop) alone; the others
	// say their lock, or are safe for concurrent use themselves.

	// o is the run's options (start).
	o Options
	// guardEnv is the guard environment of every step, the same for every
	// lot of the wave (step.Runner.GuardEnv), or guardEnvErr why there is
	// none: made once, by guardEnvOnce, by whichever lot asks first.
	guardEnv     []string
	guardEnvErr  error
	guardEnvOnce sync.Once
	// steps runs every step (Options.Steps); guard is the wave's guard it
	// shares with the merge queue (executor/step/guard). Start; both are
	// safe for concurrent use.
	steps step.Runner
	guard *guard.Guard
	// now is the clock (start).
	now func() time.Time
	// sessions is the session cap of this process (its own lock).
	sessions *prioritySem
	// nodes and byID are the run's lots (start: built by build); a node's
	// scheduling fields are the dispatcher's, its steer the node's lock.
	nodes []*node
	byID  map[string]*node
	// ready are the lots that may start (dispatcher).
	ready *readySet
	// finished carries each lot goroutine's end to the dispatcher.
	finished chan finish
	// budget is the wave's budget and quota (its own lock).
	budget budget
	// repoBusy counts the running lots per repository, jobsBusy the
	// running command lots (dispatcher).
	repoBusy map[*spec.Repo]int
	jobsBusy int
	// incidentMsg, once set, stops the wave: a push happened, or a guarded
	// ref or a worktree's HEAD moved (incidentMu).
	incidentMu  sync.Mutex
	incidentMsg string
	// pushHeld are the lots held at the start, by id, with their cause
	// (remotesOnStart).
	pushHeld map[string]string
	// requests carries the lead's requests from the watcher to the
	// dispatcher; stopCause, once set, is the lead's stop (stopMu;
	// steer.go); steerNoted says once that steering is unavailable.
	requests   chan steerMsg
	stopMu     sync.Mutex
	stopCause  string
	steerNoted sync.Once
	// leftovers is set when processes of an earlier apply of the wave
	// outlived endLeftovers (start: orphans.go).
	leftovers bool
	// badSeen are the unreadable request files noted already (only the
	// watcher's goroutine, or the dispatcher's before it starts, uses it).
	badSeen map[string]bool
	// mq is the run's merge queue and mqSide its gates, made on first use
	// by whichever lot integrates first (mqOnce; queue.go); loopCtx is the
	// run's context its leaders use and began when the run began (start).
	mqOnce  sync.Once
	mq      *mergequeue.Queue
	mqSide  *queueSide
	loopCtx context.Context
	began   time.Time
	// inQueue carries the lots that entered a merge queue to the
	// dispatcher, which gives back their places (node.queued).
	inQueue chan *node
	// api is the API failure that stopped the wave, if any (its own lock;
	// apifail.go).
	api apiStop
	// machineMsg, once set, is the machine error that stops the wave (a
	// full disk: machinestop.go; machineMu); halt cancels the running lots'
	// steps (start).
	machineMu  sync.Mutex
	machineMsg string
	halt       context.CancelFunc
}

// incident records what stops the wave (a push, a foreign ref move): no
// new lot starts.
func (r *runner) incident(msg string) {
	r.incidentMu.Lock()
	defer r.incidentMu.Unlock()
	if r.incidentMsg == "" {
		r.incidentMsg = msg
		r.emit(Event{Kind: EvOutput, Message: "INCIDENT: " + msg + "; the wave stops"})
	}
}

func (r *runner) hasIncident() bool {
	r.incidentMu.Lock()
	defer r.incidentMu.Unlock()
	return r.incidentMsg != ""
}

// Run executes the plan until every lot it can run has ended, the budget or
// a usage limit suspends the wave, or ctx is cancelled (SIGINT): then no new
// step starts, running steps are stopped, and their steps are recorded as
// interrupted. The error is for failures of cadence itself (the state file
// cannot be written); lots' failures are in the state and the Result.
func Run(ctx context.Context, o Options) (Result, error) {
	r := &runner{o: o, now: o.Now, finished: make(chan finish), repoBusy: map[*spec.Repo]int{}, requests: make(chan steerMsg), inQueue: make(chan *node)}
	if r.now == nil {
		r.now = time.Now
	}
	r.began = r.now()
	r.setUpSteps()
	r.api.sessions, r.api.stop = context.WithCancel(context.Background())
	defer r.api.stop()
	r.sessions = newPrioritySem(max(1, o.MaxSessions))
	r.sessions.freed = make(chan struct{}, 1)
	o.Store.View(func(st *state.State) {
		r.budget = budget{limit: o.Budget, limitMicros: o.BudgetUSDMicros, spent: st.Consumed.Counted, spentMicros: st.Consumed.CostMicros, cacheRead: st.Consumed.CacheRead}
	})
	r.budget.check()
	if o.QuotaUntil != nil {
		r.budget.pauseUntil(o.QuotaUntil, r.now())
	}
	remotes := r.remotesOnStart(ctx)
	if err := o.Store.UpdateWave(func(st *state.State) {
		st.Status, st.ResetAt, st.Budget, st.BudgetMicros = state.WaveRunning, o.QuotaUntil, o.Budget, o.BudgetUSDMicros
		st.Remotes = remotes
	}); err != nil {
		return Result{}, err
	}
	r.emit(Event{Kind: EvWave, Status: string(state.WaveRunning)})
	if err := r.build(); err != nil {
		return Result{}, err
	}
	r.guard.WatchRemotes(ctx, shellRepos(r.nodes))
	r.takePending(true)
	err := r.loop(ctx)
	r.compareRemotesAtEnd(ctx)
	return r.result(ctx, err)
}

func (r *runner) emit(e Event) {
	if r.o.Events == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = r.now()
	}
	r.o.Events(e)
}

// build makes the nodes of the lots this run may start, recovers steps that
// were running when cadence stopped, and queues what is ready.
func (r *runner) build() error {
	cfg := r.o.Config
	r.byID = map[string]*node{}
	// What an earlier apply left running ends before anything is replayed:
	// no lot ever runs twice at once.
	r.endLeftovers()
	if err := r.settleDrops(); err != nil {
		return err
	}
	notDone, err := r.checkDone(context.Background())
	if err != nil {
		return err
	}
	for i := range r.o.Plan.Lots {
		lp := &r.o.Plan.Lots[i]
		if !lp.Action.Pending() {
			continue
		}
		n := &node{lot: cfg.Lot(lp.ID), plan: lp}
		if alive := r.liveStep(lp.ID); alive != "" {
			r.emit(Event{Kind: EvLotEnd, Lot: lp.ID, Status: "refused", Message: alive})
			continue
		}
		if run, err := r.settleIntegration(n); !run || err != nil {
			if err != nil {
				return err
			}
			continue // its cut-short integration cannot be put right (queue.go)
		}
		r.tidyLot(n)
		if err := r.recover(n); err != nil {
			return err
		}
		if held, err := r.holdPushed(n); held || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		r.nodes = append(r.nodes, n)
		r.byID[lp.ID] = n
	}
	// A dependency that is neither done nor run now keeps its dependents
	// waiting (it waits for an answer, or was refused).
	done := map[string]bool{}
	for _, lp := range r.o.Plan.Lots {
		if lp.Action == planner.ActionDone && !notDone[lp.ID] {
			done[lp.ID] = true
		}
	}
	r.ready = newReadySet()
	for _, n := range r.nodes {
		for _, d := range n.lot.DependsOn {
			if dn := r.byID[d.ID]; dn != nil {
				n.waiting++
				dn.dependents = append(dn.dependents, n)
			} else if !done[d.ID] {
				n.waiting++ // never satisfied in this run
			}
		}
	}
	for _, n := range r.nodes {
		if n.waiting == 0 {
			r.ready.push(n)
		}
	}
	return nil
}

// loop starts ready lots while they fit and collects their ends, until no
// lot is running and none can start.
func (r *runner) loop(ctx context.Context) error {
	ctx, halt := context.WithCancel(ctx)
	defer halt()
	r.machineMu.Lock()
	r.halt = halt
	r.machineMu.Unlock()
	g, gctx := errgroup.WithContext(ctx)
	r.loopCtx = gctx
	running := 0
	var loopErr error
	done := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() { r.watchRequests(done) })
	defer watcher.Wait()
	defer close(done)
	for {
		if ctx.Err() == nil && loopErr == nil && !r.budget.stopped() && !r.hasIncident() && r.stopping() == "" && r.machineStopped() == "" {
			for {
				n := r.ready.popFitting(r.fits)
				if n == nil {
					break
				}
				if !r.roomToStart() {
					r.ready.push(n)
					break
				}
				if n.lot.Kind == spec.AgentLot {
					// A new agent lot starts with its first session's unit,
					// so lots take sessions in priority order.
					if !r.sessions.tryTake() {
						r.ready.push(n)
						break
					}
					n.heldSession = true
				}
				r.take(n, 1)
				n.queued = false
				n.started = true
				running++
				lctx := n.startSteer(gctx)
				g.Go(func() error {
					st, err := r.runLot(lctx, n)
					n.endSteer()
					r.finished <- finish{n, st}
					return err
				})
			}
		}
		if running == 0 {
			break
		}
		var f finish
		select {
		case f = <-r.finished:
		case <-r.sessions.freed:
			continue
		case m := <-r.requests:
			m.reply <- r.handle(m.req, false)
			continue
		case n := <-r.inQueue:
			// Once per start: a lot back in the queue after a conflict's
			// fix session gave its place already.
			if !n.queued {
				r.take(n, -1)
				n.queued = true
			}
			continue
		}
		running--
		if !f.n.queued {
			r.take(f.n, -1)
		}
		f.n.finished = true
		if err := r.settle(f); err != nil && loopErr == nil {
			loopErr = err
		}
	}
	if err := g.Wait(); err != nil && loopErr == nil {
		loopErr = err
	}
	return loopErr
}

// settle records the consequences of a lot's end for the others.
func (r *runner) settle(f finish) error {
	switch f.status {
	case state.LotDone:
		for _, d := range f.n.dependents {
			if d.waiting--; d.waiting == 0 && d.blockedBy == "" {
				r.ready.push(d)
			}
		}
	case state.LotFailed, state.LotHandedBack:
		return r.block(f.n, f.status)
	case state.LotQuestion:
		if r.answered(f.n.lot.ID) && r.stopping() == "" {
			r.requeue(f.n) // the lead answered while it was ending
		}
	}
	return nil
}

// block marks every lot that depends on n, directly or not, as blocked.
func (r *runner) block(n *node, why state.LotStatus) error {
	cause := droppedCause(n)
	if cause == "" {
		cause = n.lot.ID + " " + string(why)
	}
	return r.blockAll(n.dependents, cause)
}

// blockAll marks the lots deps, and every lot that depends on them, as
// blocked by cause.
func (r *runner) blockAll(deps []*node, cause string) error {
	var errs []error
	var walk func(deps []*node, cause string)
	walk = func(deps []*node, cause string) {
		for _, d := range deps {
			if d.started || d.blockedBy != "" {
				continue
			}
			d.blockedBy = cause
			r.ready.remove(d)
			msg := cause
			if err := r.o.Store.UpdateLot(d.lot.ID, func(l *state.Lot) { l.Status, l.BlockedBy = state.LotBlocked, msg }); err != nil {
				errs = append(errs, err)
			}
			r.emit(Event{Kind: EvLotEnd, Lot: d.lot.ID, Status: string(state.LotBlocked), Message: msg})
			walk(d.dependents, d.lot.ID+" blocked")
		}
	}
	walk(deps, cause)
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// fits says whether a lot can start now: its repositories have room, a
// command lot has a job, an agent lot a free session.
func (r *runner) fits(l *spec.Lot) bool {
	if l.Kind == spec.CommandLot && r.jobsBusy >= max(1, r.o.Jobs) {
		return false
	}
	if l.Kind == spec.AgentLot && !r.sessions.canTake() {
		return false
	}
	for _, repo := range l.Repos() {
		if r.repoBusy[repo] >= repo.Parallel {
			return false
		}
	}
	return true
}

func (r *runner) take(n *node, d int) {
	if n.lot.Kind == spec.CommandLot {
		r.jobsBusy += d
	}
	for _, repo := range n.lot.Repos() {
		r.repoBusy[repo] += d
	}
}

// result records the wave's end and counts the lots; the wave's status is
// state.WaveEnd's (done only when every lot of the wave file is done).
func (r *runner) result(ctx context.Context, loopErr error) (Result, error) {
	res := Result{Lots: map[state.LotStatus]int{}}
	res.Stopped = r.stopping()
	res.Machine = r.machineStopped()
	interrupted := ctx.Err() != nil || r.hasIncident() || res.Stopped != "" || res.Machine != ""
	suspendAs := r.budget.suspendStatus()
	res.Incident = r.incidentMsg
	res.API = r.apiStopped()
	var ids []string
	for _, n := range r.nodes {
		if !n.started && n.blockedBy == "" && (interrupted || suspendAs != "") {
			ids = append(ids, n.lot.ID)
		}
	}
	for _, id := range ids {
		st := state.LotQueued
		if !interrupted {
			st = state.LotSuspended
		}
		if err := r.o.Store.UpdateLot(id, func(l *state.Lot) { l.Status = st }); err != nil && loopErr == nil {
			loopErr = err
		}
	}
	r.o.Store.View(func(st *state.State) {
		planned := make(map[string]bool, len(r.o.Plan.Lots))
		for _, lp := range r.o.Plan.Lots {
			planned[lp.ID] = true
			if l := st.Lots[lp.ID]; l != nil {
				res.Lots[l.Status]++
			} else {
				res.Lots[state.LotQueued]++
			}
		}
		for _, l := range r.o.Config.Lots {
			if sl := st.Lots[l.ID]; !planned[l.ID] && (sl == nil || sl.Status != state.LotDone) {
				res.Outside++
			}
		}
	})
	res.Status = state.WaveEnd(state.RunEnd{Interrupted: interrupted, Suspended: suspendAs,
		Lots: res.Lots, Total: len(r.o.Plan.Lots), Outside: res.Outside})
	if res.Status == suspendAs {
		res.ResetAt = r.budget.resetAt
		res.Ceiling = r.budget.reached()
	}
	resetAt := res.ResetAt
	if q := r.o.QuotaUntil; resetAt == nil && q != nil && q.After(r.now()) {
		resetAt = q // stopped while waiting for it: it still holds
	}
	err := r.o.Store.UpdateWave(func(st *state.State) {
		st.Status, st.ResetAt, st.Stopped, st.Incident = res.Status, resetAt, res.Machine, res.Incident
		st.Updated = r.now().UTC()
	})
	if loopErr == nil {
		loopErr = err
	}
	r.emit(Event{Kind: EvWave, Status: string(res.Status)})
	return res, loopErr
}

// stepGuardEnv is the wave's guard environment (runner.guardEnv), made on
// first use: after executor.Apply installed the guards, before any step.
// Without it no step may run (its git would not be guarded): the error
// says why.
func (r *runner) stepGuardEnv(ctx context.Context) ([]string, error) {
	r.guardEnvOnce.Do(func() {
		// Not cut short by one lot's cancel: every lot of the wave uses it.
		r.guardEnv, r.guardEnvErr = r.steps.GuardEnv(context.WithoutCancel(ctx))
	})
	return r.guardEnv, r.guardEnvErr
}
