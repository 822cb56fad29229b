package mergequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/cadence-run/cadence/internal/state"
)

// Settle puts right, before the lot runs again, what a killed cadence
// left half done of its integration: an intent recorded across its
// repositories is completed (intent.go), then a batch that stacked it on
// lots not on the base is undone or recorded (settleStack). A lot the
// plan replaces (Lot.Replace) has its intent dropped and its stack
// forgotten. stop is "" when the lot may run; else the lot is recorded
// interrupted and stop says why. Only a failure to record state is an
// error.
func (q *Queue) Settle(ctx context.Context, lot Lot) (stop string, err error) {
	if len(lot.Repos) == 0 {
		return "", nil
	}
	if stop, err := q.settleIntent(ctx, lot); stop != "" || err != nil {
		return stop, err
	}
	return q.settleStack(ctx, lot)
}

// settleStack puts right a merge-queue batch that cadence left
// (state.Lot.Stacked: it stopped while the lot's branch sat on lots ahead
// of it that were not on the base yet). When the lots it sat on reached
// the base, or the branch never moved, the record is just cleared; when
// they did not, the branch goes back to where it was before the batch
// (Git.Unstack: it held only the lot's own commits, replayed), so no other
// lot's commits ever reach the base through this one. A branch found
// anywhere else is left as it is and the lot is recorded interrupted with
// what to do.
func (q *Queue) settleStack(ctx context.Context, lot Lot) (string, error) {
	var st *state.Stack
	q.c.Store.View(func(s *state.State) {
		if l := s.Lots[lot.ID]; l != nil && l.Stacked != nil {
			c := *l.Stacked
			st = &c
		}
	})
	if st == nil {
		return "", nil
	}
	if lot.Replace {
		// -replace sets the branch aside and starts afresh.
		return "", q.setStacked(lot.ID, nil)
	}
	repo := lot.own()
	rp := repo.Spec
	cause := ""
	base, err := q.c.Git.Base(ctx, rp)
	if err != nil {
		cause = fmt.Sprintf("cannot read the base %s of repo %s: %v", rp.Base, rp.Name, err)
	}
	refs, err := q.c.Git.Refs(ctx, rp, "")
	if err != nil && cause == "" {
		cause = fmt.Sprintf("cannot read the refs of repo %s: %v", rp.Name, err)
	}
	tip := refs["refs/heads/"+lot.Branch]
	if cause == "" {
		reached := q.c.Git.IsAncestor(ctx, rp, st.Onto, base)
		on := q.c.Git.IsAncestor(ctx, rp, st.Onto, tip)
		switch {
		case reached && on && tip != st.Onto:
			// Its own commits sit on what reached the base: if they
			// reached it too (cadence stopped once the base advanced over
			// the batch), the lot is integrated, at its own commit.
			if q.c.Git.IsAncestor(ctx, rp, tip, base) {
				return "", q.recordReached(ctx, lot, st, tip)
			}
		case reached, tip == st.Tip:
			// Nothing to put right: its own commits follow the base's.
		case on:
			backup, err := q.c.Git.Unstack(ctx, rp, repo.Worktree, lot.Branch, q.wave(), lot.ID, st.Tip, true)
			if err != nil {
				cause = fmt.Sprintf("its branch %s sits on lots of a merge-queue batch that did not reach %s, and could not be put back at %.12s: %v; put it back (git -C %s branch -f %s %.12s, with its worktree removed) and apply again",
					lot.Branch, rp.Base, st.Tip, err, rp.Path, lot.Branch, st.Tip)
				break
			}
			msg := fmt.Sprintf("its branch was put back at %s, where it was before a merge-queue batch that cadence's stop cut short", short(st.Tip))
			if backup != "" {
				msg += "; what it held is kept under " + backup
				if err := q.c.Store.UpdateLot(lot.ID, func(l *state.Lot) { l.Backups = append(l.Backups, backup) }); err != nil {
					return "", err
				}
			}
			q.c.Note(lot.ID, "", msg)
		default:
			cause = fmt.Sprintf("its branch %s is at %.12s: neither where it was before a merge-queue batch (%.12s) nor on the lots ahead of it in that batch (%.12s); put it back at %.12s and apply again, or apply with -replace %s",
				lot.Branch, tip, st.Tip, st.Onto, st.Tip, lot.ID)
		}
	}
	if cause != "" {
		now := q.c.Now().UTC()
		err := q.c.Store.UpdateLot(lot.ID, func(l *state.Lot) {
			endRunning(l, now)
			l.Status, l.Cause = state.LotInterrupted, "a merge-queue batch was cut short: "+cause
		})
		return cause, err
	}
	return "", q.setStacked(lot.ID, nil)
}

// recordReached records the lot integrated at tip, its own commits
// st.Onto..tip, which the base holds: cadence stopped after the base
// advanced over its batch and before the lot recorded it.
func (q *Queue) recordReached(ctx context.Context, lot Lot, st *state.Stack, tip string) error {
	rp := lot.own().Spec
	patch, _ := q.c.Git.PatchID(ctx, rp, st.Onto, tip)
	now := q.c.Now().UTC()
	msg := fmt.Sprintf("%s holds its change at %s: recorded integrated (cadence stopped after its merge-queue batch advanced %s)", rp.Base, short(tip), rp.Base)
	err := q.c.Store.UpdateLot(lot.ID, func(l *state.Lot) {
		endRunning(l, now)
		l.Steps = append(l.Steps, state.Step{Kind: state.StepIntegrate, Started: now, Ended: &now, Status: state.StepOK, HeadAfter: tip, Cause: msg})
		l.IntegratedSHA, l.PatchID, l.Stacked = tip, patch, nil
	})
	q.c.Note(lot.ID, state.StepIntegrate, msg)
	return err
}

// endRunning records the lot's steps still running as interrupted (the
// rule of the orchestrator's recovery for steps).
func endRunning(l *state.Lot, now time.Time) {
	for i := range l.Steps {
		if l.Steps[i].Status == state.StepRunning {
			l.Steps[i].Status, l.Steps[i].Cause, l.Steps[i].Ended = state.StepInterrupted, "cadence stopped while the step ran", &now
		}
	}
}
