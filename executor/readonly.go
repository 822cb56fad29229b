package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
)

// readOnlySession runs a read-only session (precheck, review, re-review)
// and checks, however it ended (ok, interrupted by cadence, a usage limit,
// failed, timed out), that it left every worktree of the lot as it found
// it: each HEAD, and no uncommitted file. A session that changed anything
// is untrusted: the lot is handed back (state.OutcomeUntrusted) with what
// changed, its verdict is not recorded, and the change is left where it is
// for the lead (cadence never discards an agent's work). Checking only
// after a session that ended ok let a read-only session's commit through
// when the session was then stopped: the replayed step took the commit for
// its starting point.
//
// A step replayed after cadence itself died during an earlier attempt
// (kill -9: no check ran then) is checked first against the HEAD of the
// lot's own worktree recorded when that attempt started
// (state.Step.HeadBefore); the neighbours' HEADs are not recorded per step,
// so a killed attempt's commit in a neighbour is caught by the review's
// brief (it lists the neighbours' commits) only.
func (lr *lotRun) readOnlySession(ctx context.Context, kind state.StepKind, pass int) (Outcome, state.Outcome, error) {
	if cause := lr.replayMoved(ctx, kind); cause != "" {
		return Outcome{}, state.Outcome{Kind: state.OutcomeUntrusted, Detail: cause}, nil
	}
	// The step runner compares the worktrees around each attempt
	// (step.Result.Changed); sessionOnce gathers what they say.
	lr.roChanged = nil
	out, o, err := lr.session(ctx, kind, pass, true)
	if err != nil {
		return out, o, err
	}
	what := slices.Compact(lr.roChanged)
	lr.roChanged = nil
	if len(what) == 0 {
		return out, o, nil
	}
	cause := fmt.Sprintf("the %s session changed the lot's worktrees (%s), so its verdict is not trusted; the change is left in place for the lead", kind, strings.Join(what, "; "))
	if err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		if n := len(l.Steps); n > 0 && l.Steps[n-1].Kind == kind {
			l.Steps[n-1].Conform = nil
		}
		l.Warnings = append(l.Warnings, cause)
	}); err != nil {
		return out, state.Outcome{}, err
	}
	return out, state.Outcome{Kind: state.OutcomeUntrusted, Detail: cause}, nil
}

// replayMoved says why a read-only step about to be replayed is not to be
// run ("" when it may): its last attempt, which did not end ok, started at
// a HEAD of the lot's own worktree that is no longer there.
func (lr *lotRun) replayMoved(ctx context.Context, kind state.StepKind) string {
	var last state.Step
	lr.r.o.Store.View(func(st *state.State) {
		if l := st.Lots[lr.id]; l != nil && len(l.Steps) > 0 {
			last = l.Steps[len(l.Steps)-1]
		}
	})
	if last.Kind != kind || last.Status == state.StepOK || last.HeadBefore == "" {
		return ""
	}
	own := lr.look(ctx, step.LookRequest{}, true)[lr.n.lot.Repo.Name]
	head := own.Head
	if head == "" || head == last.HeadBefore {
		return ""
	}
	return fmt.Sprintf("the HEAD of the lot's worktree moved from %s to %s during its earlier %s session, which cadence could not check (cadence stopped while it ran), so that session is not trusted; the change is left in place for the lead",
		short(last.HeadBefore), short(head), kind)
}

// limit returns at most n of xs, with "and K more" for the rest.
func limit(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(xs[:n:n], fmt.Sprintf("and %d more", len(xs)-n))
}
