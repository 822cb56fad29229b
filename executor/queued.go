package executor

import (
	"context"
	"fmt"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// integrateQueued is integrateOnce for a lot that goes through its
// repository's merge queue (batch.go): it waits for its batch's result and
// ends its integrate step at i with it, through integrateOnce's fail and
// wait.
func (lr *lotRun) integrateQueued(ctx context.Context, i int, fail, wait func(string) (state.Outcome, *conflictToFix, error)) (state.Outcome, *conflictToFix, error) {
	rp := lr.n.lot.Repo
	res := lr.enqueue()
	switch {
	case res.err != nil:
		return state.Outcome{}, nil, res.err
	case res.kind == queueIntegrated:
		msg := rp.Base + " at " + short(res.sha)
		if len(res.batch) > 1 {
			msg += fmt.Sprintf(" (merge queue: one batch of lots %s)", lotIDsOf(res.batch))
		}
		return okOutcome, nil, lr.integrated(ctx, i, res.sha, res.from, msg)
	case res.kind == queueConflict:
		return lr.conflicted(i, rp, res.files, fail)
	case res.kind == queueRed:
		return fail(res.cause)
	case res.kind == queueIncident:
		return res.outcome, nil, lr.endStep(i, state.StepFailed, res.outcome.Detail, nil)
	case res.kind == queueInterrupted:
		if err := lr.endStep(i, state.StepInterrupted, res.cause, nil); err != nil {
			return state.Outcome{}, nil, err
		}
		return interruptedOutcome(res.cause), nil, nil
	}
	return wait(res.cause)
}

// conflicted ends the integrate step at i on a rebase conflict with the
// base in files: handed back, or (on_conflict = "fix", once) returned for
// a fix session.
func (lr *lotRun) conflicted(i int, rp *spec.Repo, files []string, fail func(string) (state.Outcome, *conflictToFix, error)) (state.Outcome, *conflictToFix, error) {
	cause := fmt.Sprintf("rebase onto %s of repo %s conflicts in %s (branch, base and worktree left as they were)", rp.Base, rp.Name, joinFiles(files))
	if lr.n.lot.Kind == spec.AgentLot && lr.n.lot.OnConflict == spec.OnConflictFix && !lr.conflictFixed {
		if err := lr.endStep(i, state.StepFailed, cause, nil); err != nil {
			return state.Outcome{}, nil, err
		}
		return state.Outcome{}, &conflictToFix{rp, files}, nil
	}
	return fail(cause)
}

// settleStack puts right, before the lot runs again, a merge-queue batch
// that cadence left (state.Lot.Stacked: it stopped while the lot's branch
// sat on lots ahead of it that were not on the base yet). When the lots it
// sat on reached the base, or the branch never moved, the record is just
// cleared; when they did not, the branch goes back to where it was before
// the batch (Git.Unstack: it held only the lot's own commits, replayed),
// so no other lot's commits ever reach the base through this one. A branch
// found anywhere else is left as it is and the lot is recorded interrupted
// with what to do. It reports whether the lot may run; only a failure to
// record state is an error.
func (r *runner) settleStack(n *node) (bool, error) {
	var st *state.Stack
	r.o.Store.View(func(s *state.State) {
		if l := s.Lots[n.lot.ID]; l != nil && l.Stacked != nil {
			c := *l.Stacked
			st = &c
		}
	})
	rp := n.lot.Repo
	if st == nil || rp == nil {
		return true, nil
	}
	ctx := context.Background()
	lr := &lotRun{r: r, n: n, id: n.lot.ID, branch: r.lotBranch(n)}
	if n.plan.Action == planner.ActionReplace {
		// -replace sets the branch aside and starts afresh (recover).
		return true, lr.setStacked(nil)
	}
	_, lr.dirs, _ = r.worktreesOf(n.lot)
	cause := ""
	base, err := r.o.Git.Base(ctx, rp)
	if err != nil {
		cause = fmt.Sprintf("cannot read the base %s of repo %s: %v", rp.Base, rp.Name, err)
	}
	refs, err := r.o.Git.Refs(ctx, rp, "")
	if err != nil && cause == "" {
		cause = fmt.Sprintf("cannot read the refs of repo %s: %v", rp.Name, err)
	}
	tip := refs["refs/heads/"+lr.branch]
	if cause == "" {
		reached := r.o.Git.IsAncestor(ctx, rp, st.Onto, base)
		on := r.o.Git.IsAncestor(ctx, rp, st.Onto, tip)
		switch {
		case reached && on && tip != st.Onto:
			// Its own commits sit on what reached the base: if they
			// reached it too (cadence stopped once the base advanced over
			// the batch), the lot is integrated, at its own commit.
			if r.o.Git.IsAncestor(ctx, rp, tip, base) {
				return true, lr.recordReached(ctx, st, tip)
			}
		case reached, tip == st.Tip:
			// Nothing to put right: its own commits follow the base's.
		case on:
			backup, err := r.o.Git.Unstack(ctx, rp, lr.dirs[rp], lr.branch, r.o.Config.Wave.Name, lr.id, st.Tip, true)
			if err != nil {
				cause = fmt.Sprintf("its branch %s sits on lots of a merge-queue batch that did not reach %s, and could not be put back at %.12s: %v; put it back (git -C %s branch -f %s %.12s, with its worktree removed) and apply again",
					lr.branch, rp.Base, st.Tip, err, rp.Path, lr.branch, st.Tip)
				break
			}
			msg := fmt.Sprintf("its branch was put back at %s, where it was before a merge-queue batch that cadence's stop cut short", short(st.Tip))
			if backup != "" {
				msg += "; what it held is kept under " + backup
				if err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Backups = append(l.Backups, backup) }); err != nil {
					return false, err
				}
			}
			r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: msg})
		default:
			cause = fmt.Sprintf("its branch %s is at %.12s: neither where it was before a merge-queue batch (%.12s) nor on the lots ahead of it in that batch (%.12s); put it back at %.12s and apply again, or apply with -replace %s",
				lr.branch, tip, st.Tip, st.Onto, st.Tip, lr.id)
		}
	}
	if cause != "" {
		now := r.now().UTC()
		err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
			endRunning(l, now)
			l.Status, l.Cause = state.LotInterrupted, "a merge-queue batch was cut short: "+cause
		})
		r.emit(Event{Kind: EvLotEnd, Lot: lr.id, Status: string(state.LotInterrupted), Message: cause})
		return false, err
	}
	return true, lr.setStacked(nil)
}

// recordReached records the lot integrated at tip, its own commits
// st.Onto..tip, which the base holds: cadence stopped after the base
// advanced over its batch and before the lot recorded it.
func (lr *lotRun) recordReached(ctx context.Context, st *state.Stack, tip string) error {
	patch, _ := lr.r.o.Git.PatchID(ctx, lr.n.lot.Repo, st.Onto, tip)
	now := lr.r.now().UTC()
	msg := fmt.Sprintf("%s holds its change at %s: recorded integrated (cadence stopped after its merge-queue batch advanced %s)", lr.n.lot.Repo.Base, short(tip), lr.n.lot.Repo.Base)
	err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		endRunning(l, now)
		l.Steps = append(l.Steps, state.Step{Kind: state.StepIntegrate, Started: now, Ended: &now, Status: state.StepOK, HeadAfter: tip, Cause: msg})
		l.IntegratedSHA, l.PatchID, l.Stacked = tip, patch, nil
	})
	lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: state.StepIntegrate, Message: msg})
	return err
}
