package executor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cadence-run/cadence/executor/mergequeue"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// The orchestrator's side of the merge queue (executor/mergequeue): the
// queue is given the run's git, its state store, the test gates (a test
// step of the lot, shellIn) and the step guards (the ref ledger, the lots'
// activity, their tips, the remotes), and is handed each lot as data.

// queueSide implements mergequeue.Gates on the run (the queue's guard is
// guard.ForQueue over the run's):
// lots names the lots whose Integrate is under way, by id (the queue
// names lots by id only).
//
// atIntegrate counts, per repository, the lots at their integrate step
// (from before the step begins until the queue's result): lots that will
// move the base, or whose batch runs the gate anyway.
type queueSide struct {
	r           *runner
	mu          sync.Mutex
	lots        map[string]*lotRun
	atIntegrate map[*spec.Repo]int
}

// queue is the run's merge queue, made on first use.
func (r *runner) queue() *mergequeue.Queue {
	r.mqOnce.Do(func() {
		r.mqSide = &queueSide{r: r, lots: map[string]*lotRun{}, atIntegrate: map[*spec.Repo]int{}}
		now := r.now
		if now == nil {
			now = time.Now
		}
		r.mq = mergequeue.New(mergequeue.Config{
			Git: r.o.Git, Gates: r.mqSide, Guard: guard.ForQueue{G: r.guard, Lot: r.mqSide.guardLot, Incident: r.incident}, Store: r.o.Store, Spec: r.o.Config,
			Note: func(lot string, step state.StepKind, msg string) {
				r.emit(Event{Kind: EvOutput, Lot: lot, Step: step, Message: msg})
			},
			Now: now, Began: r.began,
			Run:       func() context.Context { return r.loopCtx },
			Failpoint: r.failpoint,
		})
	})
	return r.mq
}

func (s *queueSide) enter(lr *lotRun) {
	s.mu.Lock()
	s.lots[lr.id] = lr
	s.mu.Unlock()
}

func (s *queueSide) leave(id string) {
	s.mu.Lock()
	delete(s.lots, id)
	s.mu.Unlock()
}

// arrive counts a lot of rp at its integrate step until done is called.
func (s *queueSide) arrive(rp *spec.Repo) (done func()) {
	s.mu.Lock()
	s.atIntegrate[rp]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.atIntegrate[rp]--
		s.mu.Unlock()
	}
}

// integrating says whether a lot of rp is at its integrate step.
func (s *queueSide) integrating(rp *spec.Repo) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.atIntegrate[rp] > 0
}

// guardLot is lot id as its guard sees it, while it integrates.
func (s *queueSide) guardLot(id string) (guard.Lot, bool) {
	if lr := s.lot(id); lr != nil {
		return lr.guardLot(), true
	}
	return guard.Lot{}, false
}

func (s *queueSide) lot(id string) *lotRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lots[id]
}

// Test runs repo's test gate as a test step of lot (shellIn), a step of
// the integration (step.Request.Integrating: never sent to a worker), and
// says how it ended (mergequeue.Gates).
func (s *queueSide) Test(ctx context.Context, lot string, repo mergequeue.Repo) (mergequeue.GateRun, error) {
	lr := s.lot(lot)
	if lr == nil {
		return mergequeue.GateRun{}, fmt.Errorf("test gate of lot %s: the lot is not integrating", lot)
	}
	rp := repo.Spec
	green, msg, err := lr.shellIn(ctx, state.StepTest, 0, rp.Test, rp.TestTimeout, repo.Worktree, repo.Label, true)
	if o, ok := incidentOutcome(err); ok {
		return mergequeue.GateRun{Status: mergequeue.GateIncident, Cause: o.Detail, Incident: o}, nil
	}
	if err != nil || ctx.Err() != nil {
		o, err := stopOutcome(ctx, err)
		if err != nil {
			return mergequeue.GateRun{}, err
		}
		return mergequeue.GateRun{Status: mergequeue.GateInterrupted, Cause: o.Detail}, nil
	}
	if lr.held != "" {
		// The gate changed the lead's checkout (executor/step/guard/checkout.go).
		return mergequeue.GateRun{Status: mergequeue.GateHeld, Cause: lr.held}, nil
	}
	if !green {
		return mergequeue.GateRun{Status: mergequeue.GateRed, Cause: msg}, nil
	}
	return mergequeue.GateRun{Status: mergequeue.GateGreen}, nil
}

// queueRepo is repository rp of the lot as the queue sees it.
func (lr *lotRun) queueRepo(rp *spec.Repo) mergequeue.Repo {
	return mergequeue.Repo{Spec: rp, Worktree: lr.dirs[rp], Label: lr.repoLabel(rp), GateEnv: lr.gateEnv(rp)}
}

// queueLot is the lot as the queue sees it.
func (lr *lotRun) queueLot() mergequeue.Lot {
	lot := mergequeue.Lot{ID: lr.id, Branch: lr.branch, Batchable: lr.batchable()}
	for _, rp := range lr.n.lot.Repos() {
		lot.Repos = append(lot.Repos, lr.queueRepo(rp))
	}
	return lot
}

// gateEnv is the environment rp's test gate gets from the lead and the
// wave file (the inherited environment, the lot's and repository's env,
// the toolchain): what its results are keyed by, with its command.
func (lr *lotRun) gateEnv(rp *spec.Repo) []string {
	tc := lr.r.toolchain(rp.Name)
	env := lotEnv(nil, lr.r.o.Env, lr.n.lot.Env, tc.ToolchainPath, tc.ToolchainEnv)
	return append(slices.Clone(lr.r.o.Env), env...)
}

// batchable says whether the lot integrates through its repository's
// merge queue (mergequeue.Queue.Batchable).
func (lr *lotRun) batchable() bool {
	if lr.n.lot.Repo == nil {
		return false
	}
	return lr.r.queue().Batchable(lr.id, lr.n.lot.Repos())
}

// enqueueIntegrate hands the lot to the merge queue and waits for its
// result. A lot that goes through its repository's queue has done its
// work: it gives its place under the repository's parallel and the wave's
// -jobs to the next lot (as a pull request waiting in a merge queue holds
// no CI runner), keeping its worktree until it integrates. So while lots
// wait to integrate, a repository may have more than parallel worktrees;
// what runs in them at once is still bounded by parallel, but for the
// queue's one gate at a time and a fix session after a conflict
// (on_conflict = "fix"), which the session cap bounds.
func (lr *lotRun) enqueueIntegrate(ctx context.Context) (mergequeue.Result, error) {
	lot := lr.queueLot()
	if lot.Batchable {
		if lr.r.inQueue != nil {
			lr.r.inQueue <- lr.n // its place under parallel and -jobs goes to the next lot
		}
		lot.Coming, lr.coming = lr.coming, false
	}
	q := lr.r.queue()
	lr.r.mqSide.enter(lr)
	defer lr.r.mqSide.leave(lr.id)
	return q.Integrate(ctx, lot)
}

// comingUp says that the lot, a command lot of a batchable repository,
// runs its own test gate, after which it comes to integrate; its enqueue,
// or its end (runLot), says it no longer comes.
func (lr *lotRun) comingUp() {
	if lr.coming || !lr.facts.Command || !lr.batchable() {
		return
	}
	lr.r.queue().ComingUp(lr.n.lot.Repo)
	lr.coming = true
}

// gateInQueue says that the lot's own test gate of rp is left to the
// merge queue (docs/integration.md, Merge queue): a command lot of a
// batchable repository that will be rebased anyway, because the base moved
// since the lot started or another lot of rp is at its integrate step (it
// moves the base, or its batch gates this lot with it). Its gate would run
// on a tree it never integrates; the queue's gate, on the rebased tree, is
// its gate. Nothing reaches the base untested: the queue gates every tree
// it advances to whose green result it does not know.
func (lr *lotRun) gateInQueue(ctx context.Context, rp *spec.Repo) bool {
	if !lr.facts.Command || rp != lr.n.lot.Repo || !lr.batchable() {
		return false
	}
	lr.r.queue()
	if lr.r.mqSide.integrating(rp) {
		return true
	}
	base, err := lr.r.o.Git.Base(ctx, rp)
	return err == nil && base != lr.startBase()
}

// notComing undoes comingUp for a lot that ended without integrating.
func (lr *lotRun) notComing() {
	if !lr.coming {
		return
	}
	lr.r.queue().NotComing(lr.n.lot.Repo)
	lr.coming = false
}

// treeOf is the tree checked out in the lot's worktree of rp, read before
// its own test gate runs: a green run is recorded for it (a gate that moves
// HEAD is red), so that its integration does not test the same tree
// again. "" when it cannot be read (nothing is recorded then).
func (lr *lotRun) treeOf(ctx context.Context, rp *spec.Repo) string {
	return lr.look(ctx, step.LookRequest{Tree: true}, false)[rp.Name].Tree
}

// recordGate records the result of rp's gate that the lot's last step ran
// on tree, covering lots (mergequeue.Queue.RecordGate).
func (lr *lotRun) recordGate(rp *spec.Repo, tree string, green bool, lots []string) error {
	return lr.r.queue().RecordGate(lr.id, lr.queueRepo(rp), tree, green, lots)
}

// settleIntegration puts right, before the lot runs again, what a killed
// cadence left half done of its integration (mergequeue.Queue.Settle). It
// reports whether the lot may run; only a failure to record state is an
// error.
func (r *runner) settleIntegration(n *node) (bool, error) {
	if n.lot.Repo == nil {
		return true, nil
	}
	_, dirs, _ := r.worktreesOf(n.lot)
	lot := mergequeue.Lot{ID: n.lot.ID, Branch: r.lotBranch(n), Replace: n.plan.Action == planner.ActionReplace}
	for _, rp := range n.lot.Repos() {
		lot.Repos = append(lot.Repos, mergequeue.Repo{Spec: rp, Worktree: dirs[rp]})
	}
	stop, err := r.queue().Settle(context.Background(), lot)
	if stop != "" {
		r.emit(Event{Kind: EvLotEnd, Lot: n.lot.ID, Status: string(state.LotInterrupted), Message: stop})
	}
	return stop == "", err
}
