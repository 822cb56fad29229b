package mergequeue

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// The integration of a lot with neighbour repositories (also) advances
// several bases, one after the other; it must be all or nothing even when
// cadence dies between two advances (kill -9, a crash, the machine). So,
// once every repository is rebased, its gate green on the rebased tree and
// the remotes checked, and before the first base moves, integrateAlone
// records the intent in the lot's state (state.Lot.Integrating): per
// repository, its base branch, the commit the base is at (Old) and the
// commit it goes to (New, the lot's rebased branch). The intent is cleared
// with the record of the integration, or once every advance is undone
// after a refusal.
//
// The next apply, before it runs the lot (Settle), COMPLETES a recorded
// intent; it never rewinds it. The intent is only recorded when the
// integration was decided (every gate passed), part of it may already be
// the user's (a base advanced, the lead's checkout of it fast-forwarded,
// built on), and completing it moves only bases still at their recorded
// Old, by the same fast-forward as the integration (Queue.advance: under
// the integration locks, as cadence's own move). The repositories then
// hold the lot's change all together, and the lot is recorded integrated
// (done). Rewinding instead would take back from a base what the user may
// have seen or built on.
//
// The state is a file a step could write, so an intent is completed only
// onto trees its gates passed: for every repository with a test gate, the
// tree of its New must have a green result of that repository's gate in
// State.Gates, which the integration recorded before the intent
// (rebaseAndTest, gateOn, or the lot's own test step). Any environment
// counts (the next apply may run from another shell, which changes
// the key's digest), a result of another repository or tree does not.
// Without one no base moves and the lot stays interrupted, saying so
// (docs/running.md, State and resume); an intent onto a tree no gate
// passed was not cadence's.
//
// A base found at neither Old nor New was moved by someone else since:
// cadence moves no base then. The lot stays interrupted, its intent kept,
// with a cause naming the repository, where its base is, and what to do
// (put the base back at Old or New, then apply again; or apply with
// -replace, which drops the intent: the lot starts afresh and the bases
// stay where they are). So does a lot whose branch no longer holds New, or
// whose advance fails (a dirty checkout of the base): the next apply tries
// again. An undo cut short (a SIGINT between two advances cancels it too)
// keeps the intent likewise: the next apply completes it.

// recordIntent records, for a lot with neighbour repositories, the intent
// of its integration (every base's Old and New) before the first base
// moves, and returns it; nil for a lot with one repository. cause says why
// the intent could not be read (the integration waits); the error is a
// failure to record state.
func (q *Queue) recordIntent(ctx context.Context, lot Lot) (*state.Integration, string, error) {
	if len(lot.Repos) < 2 {
		return nil, "", nil
	}
	in := &state.Integration{}
	for _, repo := range lot.Repos {
		rp := repo.Spec
		old, err := q.c.Git.Base(ctx, rp)
		if err != nil {
			return nil, fmt.Sprintf("cannot read the base %s of repo %s: %v", rp.Base, rp.Name, err), nil
		}
		tip, err := q.c.Git.Head(ctx, repo.Worktree)
		if err != nil {
			return nil, fmt.Sprintf("cannot read the rebased branch of repo %s: %v", rp.Name, err), nil
		}
		in.Repos = append(in.Repos, state.BaseMove{Repo: rp.Name, Base: rp.Base, Old: old, New: tip})
	}
	rec := *in
	rec.Repos = slices.Clone(in.Repos)
	return in, "", q.c.Store.UpdateLot(lot.ID, func(l *state.Lot) { l.Integrating = &rec })
}

// intentMoved records that the k-th base of the intent went to sha when
// that is not the New it recorded (a base the advance left where it was:
// the branch was in it already), so that the record stays what the bases
// hold. A nil intent records nothing.
func (q *Queue) intentMoved(lot string, in *state.Integration, k int, sha string) error {
	if in == nil || in.Repos[k].New == sha {
		return nil
	}
	in.Repos[k].New = sha
	return q.c.Store.UpdateLot(lot, func(l *state.Lot) {
		if l.Integrating != nil && k < len(l.Integrating.Repos) {
			l.Integrating.Repos[k].New = sha
		}
	})
}

// clearIntent forgets the lot's intent: every base is back where it was.
func (q *Queue) clearIntent(lot string) error {
	return q.c.Store.UpdateLot(lot, func(l *state.Lot) { l.Integrating = nil })
}

// settleIntent completes the integration the lot's state records as begun
// (see the top of this file). cause is why it could not (the lot is then
// recorded interrupted with it; its intent is kept for the next apply).
// A step the state says is running is recorded interrupted either way.
// Only a failure to record state is an error.
func (q *Queue) settleIntent(ctx context.Context, lot Lot) (cause string, err error) {
	var in *state.Integration
	q.c.Store.View(func(st *state.State) {
		if l := st.Lots[lot.ID]; l != nil && l.Integrating != nil {
			c := *l.Integrating
			c.Repos = slices.Clone(c.Repos)
			in = &c
		}
	})
	if in == nil {
		return "", nil
	}
	if lot.Replace {
		// The lead drops the integration: the lot starts afresh (replace
		// forgets the intent), the bases stay where they are.
		q.c.Note(lot.ID, "", "-replace: the cut-short integration into "+reposOf(in)+" is dropped, not completed; the bases stay where they are")
		return "", nil
	}
	moved, cause := q.completeIntent(ctx, lot, in)
	now := q.c.Now().UTC()
	if cause != "" {
		cause = "the integration into " + reposOf(in) + " was cut short (cadence stopped between two repositories) and cannot be completed: " + cause
		err := q.c.Store.UpdateLot(lot.ID, func(l *state.Lot) {
			endRunning(l, now)
			l.Status, l.Cause = state.LotInterrupted, cause
		})
		return cause, err
	}
	own := in.Repos[0]
	patch, _ := q.c.Git.PatchID(ctx, lot.own().Spec, q.startBase(lot.ID), own.New)
	msg := fmt.Sprintf("completed the integration that cadence's stop cut short between repositories: %s", strings.Join(moved, "; "))
	err = q.c.Store.UpdateLot(lot.ID, func(l *state.Lot) {
		endRunning(l, now)
		l.Steps = append(l.Steps, state.Step{Kind: state.StepIntegrate, Started: now, Ended: &now, Status: state.StepOK, HeadAfter: own.New, Cause: msg})
		l.IntegratedSHA, l.PatchID, l.Integrating = own.New, patch, nil
	})
	q.c.Note(lot.ID, state.StepIntegrate, msg)
	return "", err
}

// completeIntent advances every base of the intent that is still at its
// Old to its New (Queue.advance), under the repositories' integration
// locks, and says what it did per repository; cause says why it could not
// (a base moved by someone else, the lot's branch moved, an advance
// refused), having moved no base that was not at its Old.
func (q *Queue) completeIntent(ctx context.Context, lot Lot, in *state.Integration) (did []string, cause string) {
	repos := make([]*spec.Repo, len(in.Repos))
	for k, m := range in.Repos {
		if repos[k] = q.c.Spec.Repo(m.Repo); repos[k] == nil {
			return nil, fmt.Sprintf("repo %s is no longer in the wave file: put it back, then apply again", m.Repo)
		}
		if repos[k].Base != m.Base {
			return nil, fmt.Sprintf("the base of repo %s is now %s in the wave file, the integration was into %s: put it back, then apply again", m.Repo, repos[k].Base, m.Base)
		}
	}
	locked := slices.Clone(repos)
	sort.Slice(locked, func(a, b int) bool { return locked[a].Name < locked[b].Name })
	for _, rp := range locked {
		unlock, err := q.c.Git.LockIntegration(ctx, rp, q.wave())
		if err != nil {
			return nil, "integration lock of repo " + rp.Name + ": " + err.Error() + "; apply again"
		}
		defer unlock()
	}
	if cause := q.intentTested(ctx, lot, in, repos); cause != "" {
		return nil, cause
	}
	// First every base is read: any moved by someone else stops it all
	// before anything moves.
	at := make([]string, len(repos))
	for k, rp := range repos {
		sha, err := q.c.Git.Base(ctx, rp)
		if err != nil {
			return nil, fmt.Sprintf("cannot read the base %s of repo %s: %v; apply again", rp.Base, rp.Name, err)
		}
		if m := in.Repos[k]; sha != m.Old && sha != m.New {
			return nil, fmt.Sprintf("the base %s of repo %s is at %.12s, neither where it was (%.12s) nor at the lot's integrated commit (%.12s): someone moved it, and cadence moves no base it did not leave. Put it back at one of them and apply again (cadence completes the integration), or apply with -replace %s to drop it (the lot starts afresh)",
				rp.Base, rp.Name, sha, m.Old, m.New, lot.ID)
		}
		at[k] = sha
	}
	for k, rp := range repos {
		m := in.Repos[k]
		if at[k] == m.New {
			did = append(did, fmt.Sprintf("repo %s: %s already at %.12s", rp.Name, rp.Base, m.New))
			continue
		}
		refs, err := q.c.Git.Refs(ctx, rp, "")
		if err != nil {
			return did, fmt.Sprintf("cannot read the refs of repo %s: %v; apply again", rp.Name, err)
		}
		if tip := refs["refs/heads/"+lot.Branch]; tip != m.New {
			return did, fmt.Sprintf("the lot's branch %s in repo %s is at %.12s, not at the commit the integration recorded (%.12s): put it back (git -C %s branch -f %s %s) and apply again, or apply with -replace %s to drop the integration",
				lot.Branch, rp.Name, tip, m.New, rp.Path, lot.Branch, m.New, lot.ID)
		}
		before, sha, berr, err := q.advance(ctx, rp, lot.ID, lot.Branch, m.New)
		if err == nil {
			err = berr
		}
		if err == nil && (before != m.Old || sha != m.New) {
			err = fmt.Errorf("its base went from %.12s to %.12s, not from %.12s to %.12s", before, sha, m.Old, m.New)
			if sha != before && before == m.Old {
				if rerr := q.rewind(ctx, rp, lot.ID, sha, before); rerr != nil {
					err = fmt.Errorf("%w, and could not be put back: %v", err, rerr)
				}
			}
		}
		if err != nil {
			return did, fmt.Sprintf("repo %s: %v; apply again once that is mended", rp.Name, err)
		}
		did = append(did, fmt.Sprintf("repo %s: %s advanced to %.12s", rp.Name, rp.Base, m.New))
	}
	return did, ""
}

// intentTested says why the intent may not be completed for want of a
// green gate result on the tree of a New (see the top of this file); ""
// when every repository with a test gate has one. repos are the intent's
// repositories in the wave file, in its order.
func (q *Queue) intentTested(ctx context.Context, lot Lot, in *state.Integration, repos []*spec.Repo) string {
	for k, rp := range repos {
		if rp.Test == "" {
			continue
		}
		m := in.Repos[k]
		tree, err := q.c.Git.TreeOf(ctx, rp, m.New)
		if err != nil {
			return fmt.Sprintf("cannot read the tree of %.12s, the commit the integration advances %s of repo %s to: %v; apply again, or apply with -replace %s to drop the integration",
				m.New, rp.Base, rp.Name, err, lot.ID)
		}
		green := false
		q.c.Store.View(func(st *state.State) {
			for _, g := range st.Gates {
				green = green || g.Green && g.Repo == rp.Name && g.Tree == tree
			}
		})
		if !green {
			return fmt.Sprintf("repo %s has no green result of its test gate for tree %s (of %.12s, the commit the integration advances %s to), and cadence completes an integration only onto a tree its gate passed: this intent is not one cadence recorded. cadence moved no base; apply with -replace %s to drop it (the lot starts afresh)",
				rp.Name, short(tree), m.New, rp.Base, lot.ID)
		}
	}
	return ""
}

// reposOf names the repositories of an intent: "repos app and web".
func reposOf(in *state.Integration) string {
	var names []string
	for _, m := range in.Repos {
		names = append(names, m.Repo)
	}
	return "repos " + strings.Join(names, " and ")
}
