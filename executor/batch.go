package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// The merge queue (DESIGN.md §5). Lots of one repository that are ready to
// integrate at the same time integrate as one batch, the way bors does:
//
//   - The first lot to reach integration starts the repository's leader (a
//     goroutine of the run, not of the lot), which takes the integration
//     lock; every lot that reaches integration while the lock is awaited or
//     a batch is under way joins the next batch, in the order it arrived.
//   - A batch is rebased in order: the first lot onto the base, each next
//     one onto the rebased tip of the ones ahead of it (Git.RebaseOnto).
//     Before a lot is rebased onto lots that are not on the base yet, the
//     state records it (state.Lot.Stacked), so that a cadence killed at any
//     moment leaves nothing the next apply could take for the lot's own
//     commits (settleStack).
//   - The test gate runs once, on the combined tip, in the last lot's
//     worktree. A result is keyed by tree id, command and environment
//     (state.State.Gates, gates.go): no tree is tested twice.
//   - Green: the base advances by fast-forward over the whole batch. Red:
//     the batch is bisected, each probe a gate run on the tip of a prefix,
//     until the first lot whose prefix is red is found; the base advances
//     over the green prefix ahead of it, that lot is handed back (its gate
//     red on the rebased branch), and the lots behind it are put back
//     where they were and go to the next batch. Never does the base point
//     at a tip whose tree did not pass the gate.
//   - A lot that conflicts with the base is handed back (or fixed, with
//     on_conflict = "fix") as before; one that conflicts only with lots
//     ahead of it in the batch goes to the next batch, which rebases it
//     onto what the base then holds.
//
// Only lots with their own repository alone (no neighbours: their
// integration is all or nothing across repositories, intent.go), a test
// gate, merge_queue not false, and no earlier integration recorded
// (-replace's idempotent check) go through the queue; the others integrate
// alone (integrateOnce), under the same lock. A lot's own test step after
// its write step is as before.

// mergeQueue is one repository's queue of lots waiting to integrate.
type mergeQueue struct {
	mu      sync.Mutex
	waiting []*queued
	leading bool
	// coming counts the command lots of the repository whose own test
	// gate runs now: green, they come to integrate next (comingUp).
	// changed is closed when coming or waiting changes; lastGate is how
	// long the repository's last gate run took.
	coming   int
	changed  chan struct{}
	lastGate time.Duration
}

// signalLocked wakes a leader waiting for lots to come (q.mu held).
func (q *mergeQueue) signalLocked() {
	if q.changed != nil {
		close(q.changed)
		q.changed = nil
	}
}

// awaitComing waits, before a batch is taken, for the command lots whose
// own test gate runs now (they finished together with the lots waiting,
// and would otherwise make a batch of their own right after this one),
// but no longer than the repository's last gate run took: a gate that
// runs longer than that is not waited for.
func (q *mergeQueue) awaitComing(ctx context.Context) {
	q.mu.Lock()
	bound := q.lastGate
	q.mu.Unlock()
	if bound <= 0 {
		return
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		q.mu.Lock()
		if q.coming == 0 {
			q.mu.Unlock()
			return
		}
		if q.changed == nil {
			q.changed = make(chan struct{})
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// noteGate records how long a gate run of the repository took.
func (q *mergeQueue) noteGate(d time.Duration) {
	q.mu.Lock()
	q.lastGate = d
	q.mu.Unlock()
}

// comingUp says that the lot, a command lot of the queue's repository,
// runs its own test gate, after which it comes to integrate; the lot's
// enqueue, or its end (runLot), says it no longer comes.
func (lr *lotRun) comingUp() {
	if lr.coming || !lr.facts.Command || !lr.batchable() {
		return
	}
	q := lr.r.queueOf(lr.n.lot.Repo)
	q.mu.Lock()
	q.coming++
	lr.coming = true
	q.mu.Unlock()
}

// notComing undoes comingUp for a lot that ended without integrating.
func (lr *lotRun) notComing() {
	if !lr.coming {
		return
	}
	q := lr.r.queueOf(lr.n.lot.Repo)
	q.mu.Lock()
	q.coming--
	lr.coming = false
	q.signalLocked()
	q.mu.Unlock()
}

// queued is a lot in the queue; the leader sends its result on done.
type queued struct {
	lr   *lotRun
	done chan queueResult
	// pre is where its branch was when its batch took it; from is the
	// commit its own commits sit on once rebased, tip its rebased tip.
	pre, from, tip string
	stacked        bool
}

// queueKind is what became of a lot in its batch.
type queueKind int

const (
	queueIntegrated  queueKind = iota // the base holds it (queueResult.sha)
	queueRed                          // the gate is red with it: handed back
	queueConflict                     // it conflicts with the base
	queueWait                         // a reason outside the lot: stays at integrate
	queueInterrupted                  // cadence is stopping
	queueIncident                     // a gate moved a guarded ref
	queueAgain                        // internal: goes to the next batch
	queueHeld                         // internal: a gate changed the lead's checkout (abandon)
)

// queueResult is a lot's result from its batch.
type queueResult struct {
	kind  queueKind
	cause string
	// sha is the lot's integrated commit, from the commit its own commits
	// sit on (for its patch-id); batch names the lots integrated with it.
	sha, from string
	batch     []string
	files     []string // queueConflict
	// outcome is the incident of the lot named lot (queueIncident).
	outcome state.Outcome
	lot     string
	err     error // a failure to record state
}

// batchable says whether the lot integrates through the merge queue.
func (lr *lotRun) batchable() bool {
	rp := lr.n.lot.Repo
	if rp == nil || rp.Test == "" || rp.NoMergeQueue || len(lr.n.lot.Repos()) != 1 {
		return false
	}
	prior := ""
	lr.r.o.Store.View(func(st *state.State) { prior = st.Lots[lr.id].PatchID })
	return prior == ""
}

// queueOf is repository rp's merge queue.
func (r *runner) queueOf(rp *spec.Repo) *mergeQueue {
	r.queuesMu.Lock()
	defer r.queuesMu.Unlock()
	if r.queues == nil {
		r.queues = map[*spec.Repo]*mergeQueue{}
	}
	q := r.queues[rp]
	if q == nil {
		q = &mergeQueue{}
		r.queues[rp] = q
	}
	return q
}

// enqueue puts the lot in its repository's queue and waits for its
// batch's result; the first lot in an idle queue starts the leader. A lot
// in the queue has done its work: it gives its place under the
// repository's parallel and the wave's -jobs to the next lot (as a pull
// request waiting in a merge queue holds no CI runner), keeping its
// worktree until it integrates. So while lots wait to integrate, a
// repository may have more than parallel worktrees; what runs in them at
// once is still bounded by parallel, but for the queue's one gate at a
// time and a fix session after a conflict (on_conflict = "fix"), which the
// session cap bounds.
func (lr *lotRun) enqueue() queueResult {
	rp := lr.n.lot.Repo
	if lr.r.inQueue != nil {
		lr.r.inQueue <- lr.n // its place under parallel and -jobs goes to the next lot
	}
	q := lr.r.queueOf(rp)
	it := &queued{lr: lr, done: make(chan queueResult, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, it)
	if lr.coming {
		q.coming--
		lr.coming = false
	}
	q.signalLocked()
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if lead {
		go lr.r.lead(q, rp)
	}
	return <-it.done
}

// lead runs batches of q until it is empty. It uses the run's context:
// a lot's own ends with the lot.
func (r *runner) lead(q *mergeQueue, rp *spec.Repo) {
	ctx := r.loopCtx
	var again []*queued
	for {
		unlock, err := r.o.Git.LockIntegration(ctx, rp, r.o.Config.Wave.Name)
		if err == nil {
			q.awaitComing(ctx)
		}
		q.mu.Lock()
		batch := append(again, q.waiting...)
		q.waiting, again = nil, nil
		q.mu.Unlock()
		if err != nil {
			res := queueResult{kind: queueWait, cause: "integration lock: " + err.Error()}
			if ctx.Err() != nil {
				res = queueResult{kind: queueInterrupted, cause: "stopped by cadence"}
			}
			for _, it := range batch {
				it.done <- res
			}
		} else {
			again = r.integrateBatch(ctx, rp, batch)
			unlock()
		}
		q.mu.Lock()
		if len(again) == 0 && len(q.waiting) == 0 {
			q.leading = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
}

// integrateBatch integrates batch (under rp's integration lock) and sends
// each lot its result, but for the lots it returns: those go to the next
// batch.
func (r *runner) integrateBatch(ctx context.Context, rp *spec.Repo, batch []*queued) (again []*queued) {
	send := func(it *queued, res queueResult) {
		if res.kind == queueAgain {
			again = append(again, it)
			return
		}
		// A lot that does not sit on lots off the base forgets its
		// batch (an integrated one does so with its record).
		if res.kind != queueIntegrated && res.err == nil && !it.stacked && it.pre != "" {
			if err := it.lr.setStacked(nil); err != nil {
				res = queueResult{err: err}
			}
		}
		it.done <- res
	}
	base, err := r.o.Git.Base(ctx, rp)
	if err != nil {
		for _, it := range batch {
			send(it, r.stopped(ctx, fmt.Sprintf("cannot read the base %s of repo %s: %v", rp.Base, rp.Name, err)))
		}
		return again
	}
	stack := r.stack(ctx, rp, base, batch, send)
	if len(stack) == 0 {
		return again
	}
	if len(stack) > 1 {
		r.emit(Event{Kind: EvOutput, Lot: stack[len(stack)-1].lr.id, Step: state.StepIntegrate,
			Message: fmt.Sprintf("merge queue of repo %s: lots %s rebased in order onto %s, one test gate on their combined tip", rp.Name, lotIDs(stack), rp.Base)})
	}
	// lo is the longest prefix known green (0: none, the base), hi the
	// shortest known red (len+1: none known).
	results := map[int]gateRun{}
	probe := func(k int) gateRun {
		if g, ok := results[k]; ok {
			return g
		}
		g := r.gateOn(ctx, rp, stack[:k])
		results[k] = g
		return g
	}
	lo, hi := 0, len(stack)+1
	if g := probe(len(stack)); g.stop != nil {
		r.abandon(ctx, rp, stack, *g.stop, send)
		return again
	} else if g.green {
		lo = len(stack)
	} else {
		hi = len(stack)
	}
	for hi <= len(stack) && hi-lo > 1 {
		mid := (lo + hi) / 2
		g := probe(mid)
		switch {
		case g.stop != nil:
			r.abandon(ctx, rp, stack, *g.stop, send)
			return again
		case g.green:
			lo = mid
		default:
			hi = mid
		}
	}
	if lo > 0 {
		if stop := r.advanceOver(ctx, rp, stack[:lo]); stop != nil {
			r.abandon(ctx, rp, stack, *stop, send)
			return again
		}
		ids := idsOf(stack[:lo])
		for _, it := range stack[:lo] {
			send(it, queueResult{kind: queueIntegrated, sha: it.tip, from: it.from, batch: ids})
		}
	}
	if hi <= len(stack) {
		culprit := stack[hi-1]
		culprit.stacked = false // on the base's new tip, or on the base
		cause := fmt.Sprintf("the test gate of repo %s is red on the rebased branch: %s", rp.Name, results[hi].msg)
		if hi > 1 {
			cause = fmt.Sprintf("the test gate of repo %s is red on the rebased branch, on top of lots %s ahead of it in the merge queue (green without it, now on %s): %s",
				rp.Name, lotIDs(stack[:hi-1]), rp.Base, results[hi].msg)
		}
		send(culprit, queueResult{kind: queueRed, cause: cause})
		for _, it := range stack[hi:] {
			if err := r.putBack(ctx, rp, it); err != nil {
				send(it, queueResult{kind: queueWait, cause: err.Error()})
				continue
			}
			r.emit(Event{Kind: EvOutput, Lot: it.lr.id, Step: state.StepIntegrate, Message: "behind lot " + culprit.lr.id + ", whose test gate is red: put back where it was, for the next batch of the merge queue"})
			send(it, queueResult{kind: queueAgain})
		}
	}
	return again
}

// stack rebases the batch in order onto base, each lot onto the tip of
// the ones ahead of it, and returns those rebased; the others got their
// result (or go to the next batch) through send.
func (r *runner) stack(ctx context.Context, rp *spec.Repo, base string, batch []*queued, send func(*queued, queueResult)) []*queued {
	var stack []*queued
	onto := base
	for _, it := range batch {
		lr := it.lr
		dir := lr.dirs[rp]
		// Its branch must be where its last step left it: a move made
		// while it waited is put back, an incident (lotRun.checkTip).
		lr.checkTips(ctx)
		pre, err := r.o.Git.Head(ctx, dir)
		if err != nil {
			send(it, r.stopped(ctx, "cannot read the lot's branch: "+err.Error()))
			continue
		}
		// Every lot of the batch records where its own commits will sit
		// (the first: the base), so that the next apply can tell a lot
		// whose change reached the base (settleStack) from one that did
		// not; it.stacked says it sits on lots not on the base yet.
		it.pre, it.from, it.stacked = pre, onto, onto != base
		if err := lr.setStacked(&state.Stack{Onto: onto, Tip: pre}); err != nil {
			send(it, queueResult{err: err})
			continue
		}
		done := r.lots.busy(lr.id) // cadence moves the branch itself
		_, err = r.o.Git.RebaseOnto(ctx, rp, dir, onto, "")
		done()
		lr.forgetTips()
		var conflict Conflict
		switch {
		case errors.As(err, &conflict) && it.stacked:
			// The rebase was aborted: the branch is where it was.
			if err := lr.setStacked(nil); err != nil {
				send(it, queueResult{err: err})
				continue
			}
			r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: state.StepIntegrate, Message: fmt.Sprintf("conflicts in %s with lots %s ahead of it in the merge queue: tried again in the next batch, on what %s then holds", strings.Join(conflict.ConflictFiles(), ", "), lotIDs(stack), rp.Base)})
			send(it, queueResult{kind: queueAgain})
			continue
		case errors.As(err, &conflict):
			send(it, queueResult{kind: queueConflict, files: conflict.ConflictFiles()})
			continue
		case err != nil:
			if it.stacked {
				_ = r.putBack(ctx, rp, it)
			}
			send(it, r.stopped(ctx, "rebase: "+err.Error()))
			continue
		}
		if it.tip, err = r.o.Git.Head(ctx, dir); err != nil {
			if it.stacked {
				_ = r.putBack(ctx, rp, it)
			}
			send(it, r.stopped(ctx, "cannot read the rebased branch: "+err.Error()))
			continue
		}
		stack = append(stack, it)
		onto = it.tip
	}
	if len(stack) > 1 {
		r.failpoint(FailBatchStacked)
	}
	return stack
}

// advanceOver moves the base to the tip of prefix (its last lot's branch),
// after the remotes' check; a non-nil result is why it did not.
func (r *runner) advanceOver(ctx context.Context, rp *spec.Repo, prefix []*queued) *queueResult {
	last := prefix[len(prefix)-1]
	if msg := r.remotes.compare(ctx, r.o.Git, []*spec.Repo{rp}); msg != "" {
		r.incident("before the integration of lots " + lotIDs(prefix) + ", " + msg)
		return &queueResult{kind: queueWait, cause: "incident: " + msg}
	}
	// The base goes to the commit the gate passed, nothing else: the
	// branch must still be there (Advance takes the branch's tip).
	if head, err := r.o.Git.Head(ctx, last.lr.dirs[rp]); err != nil || head != last.tip {
		res := r.stopped(ctx, fmt.Sprintf("lot %s's branch is at %.12s, not at %.12s, the tip the test gate passed: nothing integrated", last.lr.id, head, last.tip))
		return &res
	}
	before, sha, berr, err := last.lr.advance(ctx, rp)
	if err == nil {
		err = berr
	}
	if err == nil && sha != last.tip {
		err = fmt.Errorf("it went from %.12s to %.12s, not to the batch's tip %.12s", before, sha, last.tip)
		if sha != before {
			if rerr := last.lr.rewind(ctx, rp, sha, before); rerr != nil {
				err = fmt.Errorf("%w, and could not be put back: %v", err, rerr)
			}
		}
	}
	if err != nil {
		res := r.stopped(ctx, fmt.Sprintf("integration into repo %s refused: %v", rp.Name, err))
		return &res
	}
	r.failpoint(FailBatchAdvanced)
	return nil
}

// abandon ends a batch that integrates nothing more: every lot of stack
// is put back where it was and gets res (but for an incident, which only
// the lot whose gate moved a guarded ref gets: the others wait).
func (r *runner) abandon(ctx context.Context, rp *spec.Repo, stack []*queued, res queueResult, send func(*queued, queueResult)) {
	for _, it := range stack {
		out := res
		if res.kind == queueIncident && res.lot != it.lr.id {
			out = queueResult{kind: queueWait, cause: "incident: the test gate of its merge-queue batch, run in lot " + res.lot + "'s worktree: " + res.outcome.Detail}
		}
		if res.kind == queueHeld {
			// The lot whose worktree ran the gate is held (checkoutguard.go):
			// interrupted, not integrated in this run; the others go back
			// to the queue for a batch without it.
			out = queueResult{kind: queueAgain}
			if res.lot == it.lr.id {
				out = queueResult{kind: queueInterrupted, cause: res.cause}
			}
		}
		if err := r.putBack(context.WithoutCancel(ctx), rp, it); err != nil && out.kind != queueIncident {
			if out.kind == queueAgain {
				out = queueResult{kind: queueWait}
			}
			out.cause += "; " + err.Error()
		}
		send(it, out)
	}
}

// putBack puts a stacked lot's branch back where it was before its batch
// (Git.Unstack) and forgets the stack; a lot that was not stacked is left
// as it is (it was rebased onto the base only).
func (r *runner) putBack(ctx context.Context, rp *spec.Repo, it *queued) error {
	if !it.stacked {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// The lot marked active for the move tells the other lots' guards it
	// is cadence's. A branch that moved past the batch's replay (someone
	// committed on it meanwhile) is kept under a backup ref first.
	head, _ := r.o.Git.Head(ctx, it.lr.dirs[rp])
	done := r.lots.busy(it.lr.id)
	backup, err := r.o.Git.Unstack(ctx, rp, it.lr.dirs[rp], it.lr.branch, r.o.Config.Wave.Name, it.lr.id, it.pre, head != it.tip)
	done()
	it.lr.forgetTips()
	if backup != "" {
		r.emit(Event{Kind: EvOutput, Lot: it.lr.id, Step: state.StepIntegrate, Message: "its branch had moved past the batch's rebase: what it held is kept under " + backup})
		if uerr := it.lr.r.o.Store.UpdateLot(it.lr.id, func(l *state.Lot) { l.Backups = append(l.Backups, backup) }); uerr != nil && err == nil {
			err = uerr
		}
	}
	if err != nil {
		return fmt.Errorf("its branch could not be put back at %.12s, where it was before the batch (the next apply does it): %v", it.pre, err)
	}
	it.stacked = false
	return it.lr.setStacked(nil)
}

// stopped is the result of a failure outside the lots: interrupted when
// cadence is stopping, else the lots wait at integrate with cause.
func (r *runner) stopped(ctx context.Context, cause string) queueResult {
	if ctx.Err() != nil {
		return queueResult{kind: queueInterrupted, cause: "stopped by cadence"}
	}
	return queueResult{kind: queueWait, cause: cause}
}

// setStacked records (nil: forgets) that the lot's branch sits on lots
// ahead of it in a batch.
func (lr *lotRun) setStacked(s *state.Stack) error {
	return lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Stacked = s })
}

func idsOf(its []*queued) []string {
	ids := make([]string, len(its))
	for i, it := range its {
		ids[i] = it.lr.id
	}
	return ids
}

// lotIDs names lots: "a, b and c".
func lotIDs(its []*queued) string { return lotIDsOf(idsOf(its)) }
