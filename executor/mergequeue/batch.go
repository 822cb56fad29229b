package mergequeue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Batches (docs/integration.md, Merge queue). Lots of one repository that
// are ready to integrate at the same time integrate as one batch, the way
// bors does:
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
//     commits (Settle).
//   - The test gate runs once, on the combined tip, in the last lot's
//     worktree. A result is keyed by tree id, command and environment
//     (gates.go): no tree is tested twice.
//   - Green: the base advances by fast-forward over the whole batch. Red:
//     the batch is bisected, each probe a gate run on the tip of a prefix,
//     until the first lot whose prefix is red is found; the base advances
//     over the green prefix ahead of it, that lot is handed back (its gate
//     red on the rebased branch), and the lots behind it are put back
//     where they were and go to the next batch. Never does the base point
//     at a tip whose tree did not pass the gate.
//   - A lot that conflicts with the base gets a Conflict result; one that
//     conflicts only with lots ahead of it in the batch goes to the next
//     batch, which rebases it onto what the base then holds.

// integrateBatch integrates batch (under rp's integration lock) and sends
// each lot its result, but for the lots it returns: those go to the next
// batch.
func (q *Queue) integrateBatch(ctx context.Context, rp *spec.Repo, batch []*queued) (next []*queued) {
	send := func(it *queued, res Result) {
		if res.Kind == again && res.err == nil {
			next = append(next, it)
			return
		}
		// A lot that does not sit on lots off the base forgets its
		// batch (an integrated one does so with its record).
		if res.Kind != Integrated && res.err == nil && !it.stacked && it.pre != "" {
			if err := q.setStacked(it.lot.ID, nil); err != nil {
				res = Result{err: err}
			}
		}
		it.done <- res
	}
	base, err := q.c.Git.Base(ctx, rp)
	if err != nil {
		for _, it := range batch {
			send(it, stopped(ctx, fmt.Sprintf("cannot read the base %s of repo %s: %v", rp.Base, rp.Name, err)))
		}
		return next
	}
	stack := q.stack(ctx, rp, base, batch, send)
	if len(stack) == 0 {
		return next
	}
	if len(stack) > 1 {
		q.c.Note(stack[len(stack)-1].lot.ID, state.StepIntegrate,
			fmt.Sprintf("merge queue of repo %s: lots %s rebased in order onto %s, one test gate on their combined tip", rp.Name, lotIDs(stack), rp.Base))
	}
	// lo is the longest prefix known green (0: none, the base), hi the
	// shortest known red (len+1: none known).
	results := map[int]probe{}
	run := func(k int) probe {
		if g, ok := results[k]; ok {
			return g
		}
		g := q.gateOn(ctx, rp, stack[:k])
		results[k] = g
		return g
	}
	lo, hi := 0, len(stack)+1
	if g := run(len(stack)); g.stop != nil {
		q.abandon(ctx, rp, stack, *g.stop, send)
		return next
	} else if g.green {
		lo = len(stack)
	} else {
		hi = len(stack)
	}
	for hi <= len(stack) && hi-lo > 1 {
		mid := (lo + hi) / 2
		g := run(mid)
		switch {
		case g.stop != nil:
			q.abandon(ctx, rp, stack, *g.stop, send)
			return next
		case g.green:
			lo = mid
		default:
			hi = mid
		}
	}
	if lo > 0 {
		if stop := q.advanceOver(ctx, rp, stack[:lo]); stop != nil {
			q.abandon(ctx, rp, stack, *stop, send)
			return next
		}
		ids := idsOf(stack[:lo])
		for _, it := range stack[:lo] {
			note := rp.Base + " at " + short(it.tip)
			if len(ids) > 1 {
				note += fmt.Sprintf(" (merge queue: one batch of lots %s)", Names(ids))
			}
			send(it, Result{Kind: Integrated, SHA: it.tip, From: it.from, Batch: ids, Note: note})
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
		send(culprit, Result{Kind: Red, Cause: cause})
		for _, it := range stack[hi:] {
			if err := q.putBack(ctx, rp, it); err != nil {
				send(it, Result{Kind: Waits, Cause: err.Error()})
				continue
			}
			q.c.Note(it.lot.ID, state.StepIntegrate, "behind lot "+culprit.lot.ID+", whose test gate is red: put back where it was, for the next batch of the merge queue")
			send(it, Result{Kind: again})
		}
	}
	return next
}

// stack rebases the batch in order onto base, each lot onto the tip of
// the ones ahead of it, and returns those rebased; the others got their
// result (or go to the next batch) through send.
func (q *Queue) stack(ctx context.Context, rp *spec.Repo, base string, batch []*queued, send func(*queued, Result)) []*queued {
	var stack []*queued
	onto := base
	for _, it := range batch {
		dir := it.lot.own().Worktree
		// Its branch must be where its last step left it: a move made
		// while it waited is put back, an incident (Guard.CheckTips).
		q.c.Guard.CheckTips(ctx, it.lot.ID)
		pre, err := q.c.Git.Head(ctx, dir)
		if err != nil {
			send(it, stopped(ctx, "cannot read the lot's branch: "+err.Error()))
			continue
		}
		// Every lot of the batch records where its own commits will sit
		// (the first: the base), so that the next apply can tell a lot
		// whose change reached the base (Settle) from one that did not;
		// it.stacked says it sits on lots not on the base yet.
		it.pre, it.from, it.stacked = pre, onto, onto != base
		if err := q.setStacked(it.lot.ID, &state.Stack{Onto: onto, Tip: pre}); err != nil {
			send(it, Result{err: err})
			continue
		}
		done := q.c.Guard.Moving(it.lot.ID) // cadence moves the branch itself
		_, err = q.c.Git.RebaseOnto(ctx, rp, dir, onto, "")
		done()
		var conflict RebaseConflict
		switch {
		case errors.As(err, &conflict) && it.stacked:
			// The rebase was aborted: the branch is where it was.
			if err := q.setStacked(it.lot.ID, nil); err != nil {
				send(it, Result{err: err})
				continue
			}
			q.c.Note(it.lot.ID, state.StepIntegrate, fmt.Sprintf("conflicts in %s with lots %s ahead of it in the merge queue: tried again in the next batch, on what %s then holds", strings.Join(conflict.ConflictFiles(), ", "), lotIDs(stack), rp.Base))
			send(it, Result{Kind: again})
			continue
		case errors.As(err, &conflict):
			send(it, Result{Kind: Conflict, Repo: rp, Files: conflict.ConflictFiles()})
			continue
		case err != nil:
			if it.stacked {
				_ = q.putBack(ctx, rp, it)
			}
			send(it, stopped(ctx, "rebase: "+err.Error()))
			continue
		}
		if it.tip, err = q.c.Git.Head(ctx, dir); err != nil {
			if it.stacked {
				_ = q.putBack(ctx, rp, it)
			}
			send(it, stopped(ctx, "cannot read the rebased branch: "+err.Error()))
			continue
		}
		stack = append(stack, it)
		onto = it.tip
	}
	if len(stack) > 1 {
		q.c.Failpoint(FailBatchStacked)
	}
	return stack
}

// advanceOver moves the base to the tip of prefix (its last lot's branch),
// after the remotes' check; a non-nil result is why it did not.
func (q *Queue) advanceOver(ctx context.Context, rp *spec.Repo, prefix []*queued) *Result {
	last := prefix[len(prefix)-1]
	if msg, lots := q.c.Guard.CheckRemotes(ctx, "before the integration of lots "+lotIDs(prefix), []*spec.Repo{rp}); msg != "" {
		for _, it := range prefix {
			if res := pushed(it.lot.ID, msg, lots); res.Kind == Incident {
				return &res
			}
		}
		return &Result{Kind: Waits, Cause: "incident: " + msg}
	}
	// The base goes to the commit the gate passed, nothing else: the
	// branch must still be there (Advance takes the branch's tip, and
	// checks it again).
	if head, err := q.c.Git.Head(ctx, last.lot.own().Worktree); err != nil || head != last.tip {
		res := stopped(ctx, fmt.Sprintf("lot %s's branch is at %.12s, not at %.12s, the tip the test gate passed: nothing integrated", last.lot.ID, head, last.tip))
		return &res
	}
	before, sha, berr, err := q.advance(ctx, rp, last.lot.ID, last.lot.Branch, last.tip)
	if err == nil {
		err = berr
	}
	if err == nil && sha != last.tip {
		err = fmt.Errorf("it went from %.12s to %.12s, not to the batch's tip %.12s", before, sha, last.tip)
		if sha != before {
			if rerr := q.rewind(ctx, rp, last.lot.ID, sha, before); rerr != nil {
				err = fmt.Errorf("%w, and could not be put back: %v", err, rerr)
			}
		}
	}
	if err != nil {
		res := stopped(ctx, fmt.Sprintf("integration into repo %s refused: %v", rp.Name, err))
		return &res
	}
	q.c.Failpoint(FailBatchAdvanced)
	return nil
}

// abandon ends a batch that integrates nothing more: every lot of stack
// is put back where it was and gets res (but for an incident, which only
// the lot whose gate moved a guarded ref gets: the others wait).
func (q *Queue) abandon(ctx context.Context, rp *spec.Repo, stack []*queued, res Result, send func(*queued, Result)) {
	for _, it := range stack {
		out := res
		if res.Kind == Incident && res.lot != it.lot.ID {
			out = Result{Kind: Waits, Cause: "incident: the test gate of its merge-queue batch, run in lot " + res.lot + "'s worktree: " + res.Incident.Detail}
			if res.pushed {
				out.Cause = "incident: before the integration of its merge-queue batch: " + res.Incident.Detail
			}
		}
		if res.Kind == held {
			// The lot whose worktree ran the gate is held: interrupted,
			// not integrated in this run; the others go back to the queue
			// for a batch without it.
			out = Result{Kind: again}
			if res.lot == it.lot.ID {
				out = Result{Kind: Interrupted, Cause: res.Cause}
			}
		}
		if err := q.putBack(context.WithoutCancel(ctx), rp, it); err != nil && out.Kind != Incident {
			if out.Kind == again {
				out = Result{Kind: Waits}
			}
			out.Cause += "; " + err.Error()
		}
		send(it, out)
	}
}

// putBack puts a stacked lot's branch back where it was before its batch
// (Git.Unstack) and forgets the stack; a lot that was not stacked is left
// as it is (it was rebased onto the base only).
func (q *Queue) putBack(ctx context.Context, rp *spec.Repo, it *queued) error {
	if !it.stacked {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// The lot marked active for the move tells the other lots' guards it
	// is cadence's. A branch that moved past the batch's replay (someone
	// committed on it meanwhile) is kept under a backup ref first.
	dir := it.lot.own().Worktree
	head, _ := q.c.Git.Head(ctx, dir)
	done := q.c.Guard.Moving(it.lot.ID)
	backup, err := q.c.Git.Unstack(ctx, rp, dir, it.lot.Branch, q.wave(), it.lot.ID, it.pre, head != it.tip)
	done()
	if backup != "" {
		q.c.Note(it.lot.ID, state.StepIntegrate, "its branch had moved past the batch's rebase: what it held is kept under "+backup)
		if uerr := q.c.Store.UpdateLot(it.lot.ID, func(l *state.Lot) { l.Backups = append(l.Backups, backup) }); uerr != nil && err == nil {
			err = uerr
		}
	}
	if err != nil {
		return fmt.Errorf("its branch could not be put back at %.12s, where it was before the batch (the next apply does it): %w", it.pre, err)
	}
	it.stacked = false
	return q.setStacked(it.lot.ID, nil)
}

// setStacked records (nil: forgets) that the lot's branch sits on lots
// ahead of it in a batch.
func (q *Queue) setStacked(lot string, s *state.Stack) error {
	return q.c.Store.UpdateLot(lot, func(l *state.Lot) { l.Stacked = s })
}

func idsOf(its []*queued) []string {
	ids := make([]string, len(its))
	for i, it := range its {
		ids[i] = it.lot.ID
	}
	return ids
}

// lotIDs names lots: "a, b and c".
func lotIDs(its []*queued) string { return Names(idsOf(its)) }
