package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/executor/mergequeue"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// integrate is the lot's integrate step: the merge queue brings the lot's
// branches onto their bases and advances them, all of the lot's
// repositories or none (mergequeue.Queue.Integrate). A conflict hands the
// lot back with the files (on_conflict = "fix": a fix session resolves it,
// once, and the lot integrates again); the patch-id of the integrated
// change is recorded; worktrees are removed, branches kept.
//
// It returns the integration's outcome, or the outcome of the conflict's fix
// session with that session's position when the fix did not go well.
func (lr *lotRun) integrate(ctx context.Context, at state.Position) (state.Position, state.Outcome, error) {
	if lr.n.lot.Repo == nil {
		return at, okOutcome, nil // nothing to integrate
	}
	for {
		o, conflict, err := lr.integrateOnce(ctx)
		if conflict == nil || err != nil {
			return at, o, err
		}
		// The locks are released: a fix session may take as long as it needs.
		if fixAt, o, err := lr.fixConflict(ctx, conflict.repo, conflict.files); o.Kind != state.OutcomeOK || err != nil {
			return fixAt, o, err
		}
		if lr.held != "" {
			// The fix session changed the lead's checkout: held.
			return at, interruptedOutcome(lr.held), nil
		}
	}
}

// conflictToFix is an integration conflict that a fix session is to resolve.
type conflictToFix struct {
	repo  *spec.Repo
	files []string
}

// integrateOnce tries the integration once (mergequeue.Queue.Integrate)
// and ends the integrate step with its result. A conflict that
// on_conflict = "fix" allows to fix is returned, not handled.
func (lr *lotRun) integrateOnce(ctx context.Context) (state.Outcome, *conflictToFix, error) {
	lr.checkTips(ctx)
	lr.r.queue()
	defer lr.r.mqSide.arrive(lr.n.lot.Repo)()
	// The lot counts as active (guard.Guard.Moving) only while cadence moves
	// its branch, never while it waits for the lock or its batch: a step
	// of another lot that moves it meanwhile is foreign (an incident, put
	// back), and the branch is checked again once the lock is taken.
	i, err := lr.beginStep(state.StepIntegrate, 0, "")
	if err != nil {
		return state.Outcome{}, nil, err
	}
	// refuse ends the step: fail for a reason of the lot (a conflict, a
	// red test gate on the rebased branch: handed back), wait for a reason
	// outside it (the lock, the user's checkout of the base, the base
	// moving meanwhile, the disk: the lot stays at integrate;
	// docs/integration.md).
	refuse := func(kind state.OutcomeKind, cause string) (state.Outcome, *conflictToFix, error) {
		if ctx.Err() != nil {
			if err := lr.endStep(i, state.StepInterrupted, "stopped by cadence", nil); err != nil {
				return state.Outcome{}, nil, err
			}
			return interruptedOutcome("stopped by cadence"), nil, nil
		}
		if err := lr.endStep(i, state.StepFailed, cause, nil); err != nil {
			return state.Outcome{}, nil, err
		}
		return state.Outcome{Kind: kind, Detail: cause}, nil, nil
	}
	fail := func(cause string) (state.Outcome, *conflictToFix, error) { return refuse(state.OutcomeRefused, cause) }
	res, err := lr.enqueueIntegrate(ctx)
	if err != nil {
		return state.Outcome{}, nil, err
	}
	switch res.Kind {
	case mergequeue.Integrated:
		return okOutcome, nil, lr.integrated(ctx, i, res.SHA, res.PatchID, res.Note)
	case mergequeue.AlreadyOn:
		return lr.alreadyIntegrated(ctx, i, res.SHA, res.Cause)
	case mergequeue.Conflict:
		return lr.conflicted(i, res.Repo, res.Files, fail)
	case mergequeue.Red:
		return fail(res.Cause)
	case mergequeue.Incident:
		// A gate moved a guarded ref: the lot fails, nothing is integrated.
		return res.Incident, nil, lr.endStep(i, state.StepFailed, res.Incident.Detail, nil)
	case mergequeue.Interrupted:
		if err := lr.endStep(i, state.StepInterrupted, res.Cause, nil); err != nil {
			return state.Outcome{}, nil, err
		}
		return interruptedOutcome(res.Cause), nil, nil
	case mergequeue.GateStopped:
		// The gate's test step recorded why; the integrate step ends with
		// the lot's interruption.
		return interruptedOutcome(res.Cause), nil, nil
	}
	return refuse(state.OutcomeIntegrationWaits, res.Cause)
}

// conflicted ends the integrate step at i on a rebase conflict with the
// base in files: handed back, or (on_conflict = "fix", once) returned for
// a fix session.
func (lr *lotRun) conflicted(i int, rp *spec.Repo, files []string, fail func(string) (state.Outcome, *conflictToFix, error)) (state.Outcome, *conflictToFix, error) {
	cause := fmt.Sprintf("rebase onto %s of repo %s conflicts in %s (branch, base and worktree left as they were)", rp.Base, rp.Name, strings.Join(files, ", "))
	if lr.n.lot.Kind == spec.AgentLot && lr.n.lot.OnConflict == spec.OnConflictFix && !lr.conflictFixed {
		if err := lr.endStep(i, state.StepFailed, cause, nil); err != nil {
			return state.Outcome{}, nil, err
		}
		return state.Outcome{}, &conflictToFix{rp, files}, nil
	}
	return fail(cause)
}

// integrated records the lot's integrate step at i ok, the base holding
// its change (patch-id patch) at sha, says msg, and removes its worktrees
// (the branches stay).
func (lr *lotRun) integrated(ctx context.Context, i int, sha, patch, msg string) error {
	// The base moved: the record is made whatever cadence's cancel says.
	ctx = context.WithoutCancel(ctx)
	if err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		l.IntegratedSHA, l.PatchID = sha, patch
		l.Integrating, l.Stacked = nil, nil
		s := &l.Steps[i]
		s.Status, s.HeadAfter = state.StepOK, sha
		t := lr.r.now().UTC()
		s.Ended = &t
	}); err != nil {
		return err
	}
	lr.r.emit(Event{Kind: EvStepEnd, Lot: lr.id, Step: state.StepIntegrate, Status: string(state.StepOK), Message: msg})
	lr.removeWorktrees(ctx)
	return nil
}

// alreadyIntegrated ends the integration step at i ok, without touching
// the base (at base), when the lot's change is on it already
// (mergequeue.AlreadyOn: the idempotent integrate of a replaced lot), and
// removes its worktrees.
func (lr *lotRun) alreadyIntegrated(ctx context.Context, i int, base, cause string) (state.Outcome, *conflictToFix, error) {
	if err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.IntegratedSHA = base }); err != nil {
		return state.Outcome{}, nil, err
	}
	if err := lr.endStep(i, state.StepOK, cause, func(s *state.Step) { s.HeadAfter = base }); err != nil {
		return state.Outcome{}, nil, err
	}
	lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: state.StepIntegrate, Message: cause})
	lr.removeWorktrees(ctx)
	return okOutcome, nil, nil
}

// fixConflict runs one fix session to resolve an integration conflict on
// the lot's branch (on_conflict = "fix"); the caller integrates again, once.
// It returns the fix session's position and outcome (ok: integrate again).
func (lr *lotRun) fixConflict(ctx context.Context, rp *spec.Repo, files []string) (state.Position, state.Outcome, error) {
	lr.conflictFixed = true
	where := ""
	if rp != lr.n.lot.Repo {
		where = " in the neighbour's worktree " + lr.dirs[rp] // not the session's folder
	}
	finding := state.Finding{Severity: state.SeverityBlocking, Text: fmt.Sprintf(
		"integration: the branch conflicts with %s of repo %s in %s. Rebase the branch onto %s%s (git rebase %s), resolve every conflict keeping both sides' intent, and finish the rebase; leave a clean tree.",
		rp.Base, rp.Name, strings.Join(files, ", "), rp.Base, where, rp.Base)}
	pass := 1
	lr.r.o.Store.View(func(st *state.State) {
		for _, s := range st.Lots[lr.id].Steps {
			pass = max(pass, s.Pass+1)
		}
	})
	at := state.Position{Step: state.StepFix, Pass: pass}
	if err := lr.setFindings([]state.Finding{finding}); err != nil {
		return at, state.Outcome{}, err
	}
	if _, o, err := lr.session(ctx, state.StepFix, pass, false); o.Kind != state.OutcomeOK || err != nil {
		return at, o, err
	}
	if dirty, err := lr.dirtyAll(ctx); err != nil || len(dirty) > 0 {
		return at, state.Outcome{Kind: state.OutcomeDirty, Detail: dirtyCause(state.StepFix, dirty, err)}, nil
	}
	return at, okOutcome, nil
}

// startBase is the base commit the lot started from.
func (lr *lotRun) startBase() string {
	var b string
	lr.r.o.Store.View(func(st *state.State) { b = st.Lots[lr.id].BaseSHA })
	return b
}

// removeWorktrees removes the lot's worktrees once it is integrated (the
// branches stay); one that cannot be removed is left in place, and said.
func (lr *lotRun) removeWorktrees(ctx context.Context) {
	if err := lr.r.steps.RemoveWorktrees(ctx, lr.stepLot()); err != nil {
		lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "worktree left in place: " + err.Error()})
	}
}
