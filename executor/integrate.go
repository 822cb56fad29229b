package executor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// integrate brings the lot's branches onto their bases and advances them,
// all of the lot's repositories or none, under their integration locks:
// rebase (changelog-only conflicts merged by union), the test gate again on
// a rebased tree, then fast-forward. A conflict hands the lot back with the
// files (on_conflict = "fix": a fix session resolves it, once); the patch-id
// of the integrated change is recorded; worktrees are removed, branches
// kept.
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

// integrateOnce tries the integration once, under the locks. A conflict
// that on_conflict = "fix" allows to fix is returned, not handled.
func (lr *lotRun) integrateOnce(ctx context.Context) (state.Outcome, *conflictToFix, error) {
	repos := lr.n.lot.Repos()
	lr.checkTips(ctx)
	// The lot counts as active (lotRun.ownWork) only while cadence moves
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
	// moving meanwhile, the disk: the lot stays at integrate, §5).
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
	wait := func(cause string) (state.Outcome, *conflictToFix, error) {
		return refuse(state.OutcomeIntegrationWaits, cause)
	}
	if lr.batchable() {
		return lr.integrateQueued(ctx, i, fail, wait)
	}
	locked := append([]*spec.Repo(nil), repos...)
	sort.Slice(locked, func(a, b int) bool { return locked[a].Name < locked[b].Name })
	var unlocks []func()
	var unlockOnce sync.Once
	release := func() {
		unlockOnce.Do(func() {
			for j := len(unlocks) - 1; j >= 0; j-- {
				unlocks[j]()
			}
		})
	}
	defer release()
	for _, rp := range locked {
		unlock, err := lr.r.o.Git.LockIntegration(ctx, rp, lr.r.o.Config.Wave.Name)
		if err != nil {
			return wait("integration lock: " + err.Error())
		}
		unlocks = append(unlocks, unlock)
	}
	lr.checkTips(ctx)
	defer lr.ownWork()() // its rebase moves the lot's branch
	for _, rp := range repos {
		rebased, err := lr.r.o.Git.Rebase(ctx, rp, lr.dirs[rp])
		var conflict Conflict
		switch {
		case errors.As(err, &conflict):
			return lr.conflicted(i, rp, conflict.ConflictFiles(), fail)
		case err != nil:
			return wait("rebase: " + err.Error())
		}
		if rp.Test != "" && (rebased || !lr.tested(ctx, rp)) {
			green, msg, err := lr.shellIn(ctx, state.StepTest, 0, rp.Test, rp.TestTimeout, lr.dirs[rp], lr.repoLabel(rp))
			if o, ok := incidentOutcome(err); ok {
				// The gate moved a guarded ref: the lot fails, nothing is
				// integrated.
				return o, nil, lr.endStep(i, state.StepFailed, o.Detail, nil)
			}
			if err != nil || ctx.Err() != nil {
				o, err := stopOutcome(ctx, err)
				return o, nil, err
			}
			if lr.held != "" {
				// The gate changed the lead's checkout: the lot is held,
				// not integrated in this run (checkoutguard.go).
				if err := lr.endStep(i, state.StepInterrupted, lr.held, nil); err != nil {
					return state.Outcome{}, nil, err
				}
				return interruptedOutcome(lr.held), nil, nil
			}
			if !green {
				return fail(fmt.Sprintf("the test gate of repo %s is red on the rebased branch: %s", rp.Name, msg))
			}
		}
	}
	// A push from a command or a test gate since the remotes were last
	// compared stops the wave before anything is integrated; the lot waits
	// at integrate (whether it pushed is the lead's to find out).
	if msg := lr.r.remotes.compare(ctx, lr.r.o.Git, repos); msg != "" {
		lr.r.incident("before the integration of lot " + lr.id + ", " + msg)
		return wait("incident: " + msg)
	}
	// A replaced lot whose rebased branch adds nothing to the base has its
	// change there already: it is not put there twice.
	if o, done, err := lr.alreadyIntegrated(ctx, i); done || err != nil {
		return o, nil, err
	}
	// Advance every base, or none. With neighbours, the intent is recorded
	// first: a cadence killed between two advances leaves it for the next
	// apply to complete (intent.go).
	intent, cause, err := lr.recordIntent(ctx, repos)
	if err != nil {
		return state.Outcome{}, nil, err
	}
	if cause != "" {
		return wait(cause)
	}
	type moved struct {
		repo     *spec.Repo
		old, new string
	}
	var done []moved
	for k, rp := range repos {
		before, sha, berr, err := lr.advance(ctx, rp)
		if err == nil && berr == nil && intent != nil && before != intent.Repos[k].Old {
			// Moved by someone else since the intent was read: put back
			// what the advance did on top of it.
			if sha != before {
				done = append(done, moved{rp, before, sha})
			}
			err = fmt.Errorf("its base %s moved to %.12s while the integration began (from %.12s)", rp.Base, before, intent.Repos[k].Old)
		}
		if err != nil || berr != nil {
			undone := true
			for j := len(done) - 1; j >= 0; j-- {
				if rerr := lr.rewind(ctx, done[j].repo, done[j].new, done[j].old); rerr != nil {
					undone = false
					lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "could not undo the integration into " + done[j].repo.Name + ": " + rerr.Error()})
				}
			}
			// Every base back where it was: nothing is left to complete.
			// A base that could not be put back keeps the intent, for the
			// next apply to complete the integration.
			if undone {
				if err := lr.clearIntent(); err != nil {
					return state.Outcome{}, nil, err
				}
			}
			if err == nil {
				err = berr
			}
			return wait(fmt.Sprintf("integration into repo %s refused: %v", rp.Name, err))
		}
		done = append(done, moved{rp, before, sha})
		if err := lr.intentMoved(intent, k, sha); err != nil {
			return state.Outcome{}, nil, err
		}
		if intent != nil && k == 0 {
			lr.r.failpoint(FailIntegrateBetweenRepos)
		}
	}
	// Every base is advanced: the locks go now, so that the next lot's
	// integration (the wave's queue) does not wait while this one records
	// its patch-id (two git processes) and removes its worktrees.
	release()
	own := done[0]
	return okOutcome, nil, lr.integrated(ctx, i, own.new, lr.startBase(), own.repo.Base+" at "+short(own.new))
}

// integrated records the lot's integrate step at i ok, the base holding
// its change at sha (its own commits from..sha, for the patch-id), says
// msg, and removes its worktrees (the branches stay).
func (lr *lotRun) integrated(ctx context.Context, i int, sha, from, msg string) error {
	// The base moved: the record is made whatever cadence's cancel says.
	ctx = context.WithoutCancel(ctx)
	patch, _ := lr.r.o.Git.PatchID(ctx, lr.n.lot.Repo, from, sha)
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
	for _, rp := range lr.n.lot.Repos() {
		if err := lr.r.o.Git.RemoveWorktree(ctx, rp, lr.dirs[rp]); err != nil {
			lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "worktree left in place: " + err.Error()})
		}
	}
	return nil
}

func joinFiles(files []string) string { return strings.Join(files, ", ") }

// alreadyIntegrated ends the integration step at i ok, without touching
// the base, when the lot recorded the patch-id of an earlier integration
// (kept across -replace) and its rebased branch, which has commits of its
// own, adds nothing to the base (an empty diff base..tip): the change is on
// the base already (DESIGN.md §5, idempotent integrate). A branch that
// changes the base is integrated, whatever its patch-id: the base may have
// lost the change since (a revert). done says so.
func (lr *lotRun) alreadyIntegrated(ctx context.Context, i int) (state.Outcome, bool, error) {
	var prior string
	lr.r.o.Store.View(func(st *state.State) { prior = st.Lots[lr.id].PatchID })
	repo := lr.n.lot.Repo
	if prior == "" {
		return state.Outcome{}, false, nil
	}
	base, err := lr.baseSHA(ctx, repo)
	if err != nil {
		return state.Outcome{}, false, nil
	}
	tip, err := lr.r.o.Git.Head(ctx, lr.dirs[repo])
	if err != nil || tip == base {
		return state.Outcome{}, false, nil
	}
	if p, err := lr.r.o.Git.PatchID(ctx, repo, base, tip); err != nil || p != "" {
		return state.Outcome{}, false, nil
	}
	cause := fmt.Sprintf("the change (patch-id %s) is already on %s: the rebased branch adds nothing to it; not integrated twice", short(prior), repo.Base)
	if err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.IntegratedSHA = base }); err != nil {
		return state.Outcome{}, true, err
	}
	if err := lr.endStep(i, state.StepOK, cause, func(s *state.Step) { s.HeadAfter = base }); err != nil {
		return state.Outcome{}, true, err
	}
	lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: state.StepIntegrate, Message: cause})
	for _, rp := range lr.n.lot.Repos() {
		if err := lr.r.o.Git.RemoveWorktree(ctx, rp, lr.dirs[rp]); err != nil {
			lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "worktree left in place: " + err.Error()})
		}
	}
	return okOutcome, true, nil
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
	if _, o, err := lr.session(ctx, state.StepFix, pass, lr.n.lot.Model, false); o.Kind != state.OutcomeOK || err != nil {
		return at, o, err
	}
	if dirty, err := lr.dirtyAll(ctx); err != nil || len(dirty) > 0 {
		return at, state.Outcome{Kind: state.OutcomeDirty, Detail: dirtyCause(state.StepFix, dirty, err)}, nil
	}
	return at, okOutcome, nil
}

// tested reports whether the commit checked out in repository rp's
// worktree passed rp's test gate: its tree has a green result (gates.go),
// or a test step of that repository recorded the commit. A branch rebased
// by a cadence that was killed before testing it is tested again.
func (lr *lotRun) tested(ctx context.Context, rp *spec.Repo) bool {
	head, err := lr.r.o.Git.Head(ctx, lr.dirs[rp])
	if err != nil {
		return false
	}
	if tree, err := lr.r.o.Git.Tree(ctx, lr.dirs[rp]); err == nil {
		if g, known := lr.knownGate(rp, tree); known && g.Green {
			return true
		}
	}
	repo := lr.repoLabel(rp)
	ok := false
	lr.r.o.Store.View(func(st *state.State) {
		for _, s := range st.Lots[lr.id].Steps {
			if s.Kind == state.StepTest && s.Status == state.StepOK && s.Repo == repo && s.HeadAfter == head {
				ok = true
			}
		}
	})
	return ok
}

// advance moves the repository's base to the lot's branch (Git.Advance),
// recorded in the wave's ref ledger as cadence's own move so that no
// step's guard takes it for a foreign one. It returns the base before and
// after, and the errors of reading the base and of the advance.
func (lr *lotRun) advance(ctx context.Context, rp *spec.Repo) (before, sha string, berr, err error) {
	lr.r.refs.own(rp, lr.id, func() gitint.RefMove {
		before, berr = lr.baseSHA(ctx, rp)
		sha, err = lr.r.o.Git.Advance(ctx, rp, lr.branch)
		if berr != nil || err != nil {
			return gitint.RefMove{}
		}
		return gitint.RefMove{Ref: "refs/heads/" + rp.Base, Old: before, New: sha}
	})
	return before, sha, berr, err
}

// rewind undoes an advance (Git.Rewind: the base from sha back to old),
// recorded in the ledger like it.
func (lr *lotRun) rewind(ctx context.Context, rp *spec.Repo, sha, old string) error {
	var err error
	lr.r.refs.own(rp, lr.id, func() gitint.RefMove {
		if err = lr.r.o.Git.Rewind(ctx, rp, sha, old); err != nil {
			return gitint.RefMove{}
		}
		return gitint.RefMove{Ref: "refs/heads/" + rp.Base, Old: sha, New: old}
	})
	return err
}

// startBase is the base commit the lot started from.
func (lr *lotRun) startBase() string {
	var b string
	lr.r.o.Store.View(func(st *state.State) { b = st.Lots[lr.id].BaseSHA })
	return b
}

// baseSHA is the current commit of a repository's base branch.
func (lr *lotRun) baseSHA(ctx context.Context, rp *spec.Repo) (string, error) {
	return lr.r.o.Git.Base(ctx, rp)
}
