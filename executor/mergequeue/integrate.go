package mergequeue

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Integrate brings the lot's branches onto their bases and advances them,
// all of the lot's repositories or none, under their integration locks:
// rebase (changelog-only conflicts merged by union), the test gate again on
// a rebased tree whose result is not known, then fast-forward. A batchable
// lot (Lot.Batchable) waits for its batch's result; ctx is then not the
// batch's (Config.Run). The error is a failure to record state; every other
// end is a Result.
func (q *Queue) Integrate(ctx context.Context, lot Lot) (Result, error) {
	if len(lot.Repos) == 0 {
		return Result{}, fmt.Errorf("lot %s: no repository to integrate into", lot.ID)
	}
	var res Result
	var err error
	if lot.Batchable {
		res, err = q.enqueue(lot)
	} else {
		res, err = q.integrateAlone(ctx, lot)
	}
	if err == nil && res.Kind == Integrated {
		// The base moved: the patch-id is read whatever ctx says.
		res.PatchID, _ = q.c.Git.PatchID(context.WithoutCancel(ctx), lot.Repos[0].Spec, res.From, res.SHA)
	}
	return res, err
}

// integrateAlone is Integrate for a lot outside the queue: under the
// integration locks of all its repositories, each is rebased and, where
// that changed what was tested, its gate runs again; then every base
// advances, or none.
func (q *Queue) integrateAlone(ctx context.Context, lot Lot) (Result, error) {
	specs := make([]*spec.Repo, len(lot.Repos))
	for k, rp := range lot.Repos {
		specs[k] = rp.Spec
	}
	release, cause := q.lockAll(ctx, specs)
	defer release()
	if cause != "" {
		return Result{Kind: Waits, Cause: cause}, nil
	}
	q.c.Guard.CheckTips(ctx, lot.ID)
	defer q.c.Guard.Moving(lot.ID)() // its rebase moves the lot's branch
	// The commit each branch was rebased to and tested at: the base
	// advances to exactly it (a branch moved since is not integrated).
	wants := make([]string, len(lot.Repos))
	for k, repo := range lot.Repos {
		rebased, res, stop, err := q.rebaseAndTest(ctx, lot, repo)
		if stop || err != nil {
			return res, err
		}
		wants[k] = rebased
	}
	// A push from a command or a test gate since the remotes were last
	// compared stops the wave before anything is integrated; a lot whose
	// steps ran there since fails (held until the lead replaces it: it may
	// be the one that pushed), another waits at integrate.
	if msg, lots := q.c.Guard.CheckRemotes(ctx, "before the integration of lot "+lot.ID, specs); msg != "" {
		return pushed(lot.ID, msg, lots), nil
	}
	// A replaced lot whose rebased branch adds nothing to the base has its
	// change there already: it is not put there twice.
	if res, done := q.alreadyOn(ctx, lot); done {
		return res, nil
	}
	return q.advanceAll(ctx, lot, specs, wants)
}

// lockAll takes the integration locks of repos, in name order; release
// gives back those taken. cause says why one could not be taken (the lot
// waits at integrate).
func (q *Queue) lockAll(ctx context.Context, repos []*spec.Repo) (release func(), cause string) {
	locked := append([]*spec.Repo(nil), repos...)
	sort.Slice(locked, func(a, b int) bool { return locked[a].Name < locked[b].Name })
	var unlocks []func()
	release = func() {
		for j := len(unlocks) - 1; j >= 0; j-- {
			unlocks[j]()
		}
		unlocks = nil
	}
	for _, rp := range locked {
		unlock, err := q.c.Git.LockIntegration(ctx, rp, q.wave())
		if err != nil {
			return release, "integration lock: " + err.Error()
		}
		unlocks = append(unlocks, unlock)
	}
	return release, ""
}

// rebaseAndTest rebases the lot's branch in repo onto its base (rebased:
// the commit it is then at) and, when
// the tree it now holds was not tested (a rebase that rewrote the branch
// but left its tree as it was keeps the tree's green result), runs the
// repository's gate on it. stop says the integration ends with res (a conflict, a red
// or stopped gate, an incident); err is a failure to record state.
func (q *Queue) rebaseAndTest(ctx context.Context, lot Lot, repo Repo) (rebased string, res Result, stop bool, err error) {
	rp := repo.Spec
	moved, err := q.c.Git.Rebase(ctx, rp, repo.Worktree)
	var conflict RebaseConflict
	switch {
	case errors.As(err, &conflict):
		return "", Result{Kind: Conflict, Repo: rp, Files: conflict.ConflictFiles()}, true, nil
	case err != nil:
		return "", Result{Kind: Waits, Cause: "rebase: " + err.Error()}, true, nil
	}
	if rebased, err = q.c.Git.Head(ctx, repo.Worktree); err != nil {
		return "", Result{Kind: Waits, Cause: "cannot read the rebased branch: " + err.Error()}, true, nil
	}
	if rp.Test == "" || q.tested(ctx, lot.ID, repo, moved) {
		return rebased, Result{}, false, nil
	}
	g, err := q.c.Gates.Test(ctx, lot.ID, repo)
	if err != nil {
		return "", Result{}, true, err
	}
	switch g.Status {
	case GateIncident:
		// The gate moved a guarded ref: the lot fails, nothing is
		// integrated.
		return "", Result{Kind: Incident, Incident: g.Incident}, true, nil
	case GateInterrupted:
		return "", Result{Kind: GateStopped, Cause: g.Cause}, true, nil
	case GateHeld:
		// The gate changed the lead's checkout: the lot is held, not
		// integrated in this run.
		return "", Result{Kind: Interrupted, Cause: g.Cause}, true, nil
	case GateRed:
		return "", Result{Kind: Red, Cause: fmt.Sprintf("the test gate of repo %s is red on the rebased branch: %s", rp.Name, g.Cause)}, true, nil
	}
	// The green result is recorded for the tree it ran on (a gate that
	// moves HEAD is red): completing an intent needs it (intent.go).
	if tree, terr := q.c.Git.Tree(ctx, repo.Worktree); terr == nil {
		if err := q.RecordGate(lot.ID, repo, tree, true, []string{lot.ID}); err != nil {
			return "", Result{}, true, err
		}
	}
	return rebased, Result{}, false, nil
}

// advanceAll advances the base of every repository of the lot to its
// rebased branch, or none. With neighbours, the intent is recorded first:
// a cadence killed between two advances leaves it for the next apply to
// complete (intent.go). A base that moved meanwhile, or one that cannot
// advance, undoes the advances made; the lot waits at integrate.
func (q *Queue) advanceAll(ctx context.Context, lot Lot, specs []*spec.Repo, wants []string) (Result, error) {
	intent, cause, err := q.recordIntent(ctx, lot)
	if err != nil {
		return Result{}, err
	}
	if cause != "" {
		return Result{Kind: Waits, Cause: cause}, nil
	}
	type moved struct {
		repo     *spec.Repo
		old, new string
	}
	var done []moved
	for k, rp := range specs {
		before, sha, berr, err := q.advance(ctx, rp, lot.ID, lot.Branch, wants[k])
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
				if rerr := q.rewind(ctx, done[j].repo, lot.ID, done[j].new, done[j].old); rerr != nil {
					undone = false
					q.c.Note(lot.ID, "", "could not undo the integration into "+done[j].repo.Name+": "+rerr.Error())
				}
			}
			// Every base back where it was: nothing is left to complete.
			// A base that could not be put back keeps the intent, for the
			// next apply to complete the integration.
			if undone {
				if err := q.clearIntent(lot.ID); err != nil {
					return Result{}, err
				}
			}
			if err == nil {
				err = berr
			}
			return Result{Kind: Waits, Cause: fmt.Sprintf("integration into repo %s refused: %v", rp.Name, err)}, nil
		}
		done = append(done, moved{rp, before, sha})
		if err := q.intentMoved(lot.ID, intent, k, sha); err != nil {
			return Result{}, err
		}
		if intent != nil && k == 0 {
			q.c.Failpoint(FailBetweenRepos)
		}
	}
	own := done[0]
	return Result{Kind: Integrated, SHA: own.new, From: q.startBase(lot.ID), Batch: []string{lot.ID}, Note: own.repo.Base + " at " + short(own.new)}, nil
}

// alreadyOn is the AlreadyOn result when the lot recorded the patch-id of
// an earlier integration (kept across -replace) and its rebased branch,
// which has commits of its own, adds nothing to the base (an empty diff
// base..tip): the change is on the base already (docs/integration.md,
// idempotent integrate). A branch that changes the base is integrated,
// whatever its patch-id: the base may have lost the change since (a
// revert). done says so.
func (q *Queue) alreadyOn(ctx context.Context, lot Lot) (Result, bool) {
	var prior string
	q.c.Store.View(func(st *state.State) {
		if l := st.Lots[lot.ID]; l != nil {
			prior = l.PatchID
		}
	})
	repo := lot.own()
	if prior == "" {
		return Result{}, false
	}
	base, err := q.c.Git.Base(ctx, repo.Spec)
	if err != nil {
		return Result{}, false
	}
	tip, err := q.c.Git.Head(ctx, repo.Worktree)
	if err != nil || tip == base {
		return Result{}, false
	}
	if p, err := q.c.Git.PatchID(ctx, repo.Spec, base, tip); err != nil || p != "" {
		return Result{}, false
	}
	cause := fmt.Sprintf("the change (patch-id %s) is already on %s: the rebased branch adds nothing to it; not integrated twice", short(prior), repo.Spec.Base)
	return Result{Kind: AlreadyOn, SHA: base, Cause: cause, Note: cause}, true
}

// startBase is the base commit the lot started from (state.Lot.BaseSHA).
func (q *Queue) startBase(lot string) string {
	var b string
	q.c.Store.View(func(st *state.State) {
		if l := st.Lots[lot]; l != nil {
			b = l.BaseSHA
		}
	})
	return b
}

// advance moves rp's base to lot's branch (Git.Advance), as cadence's own
// move (Guard.OwnMove). It returns the base before and after, and the
// errors of reading the base and of the advance.
func (q *Queue) advance(ctx context.Context, rp *spec.Repo, lot, branch, want string) (before, sha string, berr, err error) {
	q.c.Guard.OwnMove(rp, lot, func() gitint.RefMove {
		before, berr = q.c.Git.Base(ctx, rp)
		sha, err = q.c.Git.Advance(ctx, rp, branch, want)
		if berr != nil || err != nil {
			return gitint.RefMove{}
		}
		return gitint.RefMove{Ref: "refs/heads/" + rp.Base, Old: before, New: sha}
	})
	return before, sha, berr, err
}

// rewind undoes an advance (Git.Rewind: the base from sha back to old),
// as cadence's own move like it.
func (q *Queue) rewind(ctx context.Context, rp *spec.Repo, lot, sha, old string) error {
	var err error
	q.c.Guard.OwnMove(rp, lot, func() gitint.RefMove {
		if err = q.c.Git.Rewind(ctx, rp, sha, old); err != nil {
			return gitint.RefMove{}
		}
		return gitint.RefMove{Ref: "refs/heads/" + rp.Base, Old: sha, New: old}
	})
	return err
}
