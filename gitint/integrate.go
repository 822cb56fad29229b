package gitint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// ErrNotFastForward means the base moved after the lot's branch was
// rebased onto it: the branch no longer contains it.
var ErrNotFastForward = errors.New("the base moved meanwhile: the branch does not contain it")

// ErrBranchMoved means the lot's branch is no longer at the commit cadence
// rebased and tested (Advance's want): something else moved it; nothing
// is integrated.
var ErrBranchMoved = errors.New("the lot's branch moved after its rebase")

// Advance moves the repo's base branch to the lot's branch, by fast-forward
// only, when the branch is at want (the commit cadence rebased and tested;
// "" for no check: ErrBranchMoved otherwise) and the objects it brings
// hash to their names (ErrForgedObjects otherwise): `merge --ff-only` in the worktree that has the base checked out
// (refused when its tracked files are dirty: nothing is touched), or
// `update-ref` with the expected old value when none has, so a base that
// someone else moved meanwhile is never overwritten. It returns the base's
// new commit. A branch already in the base is not integrated twice. Call it
// under LockIntegration, after Rebase.
//
// Its git processes, in the common case: one `status` of the
// checkout, which also says which branch and commit it has, and the
// `merge`; the refs are read from their files, the checkout of the base
// is remembered from the last call (checkoutOf), and whether the base is
// an ancestor of the branch is asked of git only when the merge refuses.
func (g *Repos) Advance(ctx context.Context, repo *spec.Repo, branch, want string) (string, error) {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	baseRef := "refs/heads/" + repo.Base
	base, err := g.branchCommit(ctx, repo.Path, repo.Base)
	if err != nil {
		return "", fmt.Errorf("base branch %s: %w", repo.Base, err)
	}
	tip, err := g.branchCommit(ctx, repo.Path, branch)
	if err != nil {
		return "", fmt.Errorf("lot branch %s: %w", branch, err)
	}
	if want != "" && tip != want {
		return "", fmt.Errorf("%w: lot branch %s is at %.12s, not at %.12s, the commit cadence rebased and tested", ErrBranchMoved, branch, tip, want)
	}
	if tip == base {
		return base, nil // already in the base
	}
	// What the base gets is what its names say (ErrForgedObjects).
	if err := g.verifyObjects(ctx, repo.Path, base, tip); err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		wt, err := g.checkoutOf(ctx, repo.Path, baseRef, attempt > 0)
		if err != nil {
			return "", err
		}
		if wt == "" {
			break
		}
		st, err := g.checkoutStatus(ctx, wt)
		if (err != nil || st.Head != baseRef) && attempt == 0 {
			continue // the remembered checkout is gone or elsewhere: list again
		}
		if err != nil {
			return "", err
		}
		if st.Head != baseRef {
			return "", fmt.Errorf("%s no longer has %s checked out", wt, repo.Base)
		}
		if len(st.Changed) > 0 {
			if g.isAncestor(ctx, repo.Path, tip, st.OID) {
				return st.OID, nil // already in the base
			}
			if !g.isAncestor(ctx, repo.Path, st.OID, tip) {
				return "", ErrNotFastForward
			}
			return "", fmt.Errorf("%s has %s checked out with uncommitted changes to %s: commit or stash them, then apply again", wt, repo.Base, strings.Join(st.Changed, ", "))
		}
		// Once begun, the fast-forward of the lead's checkout runs to its
		// end (bounded by DefaultTimeout): git does not update a checkout
		// atomically, and a merge stopped by cadence's own cancel (a
		// Ctrl-C) left tracked files half updated, which the next apply
		// refused as a dirty checkout. (A kill -9 of cadence does not stop
		// it either: git runs outside the supervisor.)
		if _, err := g.Run(context.WithoutCancel(ctx), wt, "merge", "--ff-only", "--quiet", tip); err != nil {
			if !g.isAncestor(ctx, repo.Path, st.OID, tip) {
				if g.isAncestor(ctx, repo.Path, tip, st.OID) {
					return st.OID, nil // already in the base
				}
				return "", ErrNotFastForward
			}
			return "", err
		}
		// "Already up to date" (the branch is in the base) leaves the
		// base where it was.
		if now, err := g.branchCommit(ctx, repo.Path, repo.Base); err == nil && now == st.OID {
			return st.OID, nil
		}
		return tip, nil
	}
	if g.isAncestor(ctx, repo.Path, tip, base) {
		return base, nil // already in the base
	}
	if !g.isAncestor(ctx, repo.Path, base, tip) {
		return "", ErrNotFastForward
	}
	if _, err := g.Run(ctx, repo.Path, "update-ref", "--no-deref", "-m", "cadence: integrate "+branch, baseRef, tip, base); err != nil {
		return "", fmt.Errorf("the base moved while integrating: %w", err)
	}
	return tip, nil
}

// isAncestor says whether commit a is an ancestor of commit b (`git
// merge-base --is-ancestor`); false when git cannot say.
func (g *Repos) isAncestor(ctx context.Context, repo, a, b string) bool {
	_, err := g.Run(ctx, repo, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// checkoutOf is checkedOutIn, remembered per repository: the worktree
// found last time is returned again without asking git (the caller checks
// that it still has ref checked out, and calls again with fresh set when it
// has not). A repository where no worktree had it is listed each time.
func (g *Repos) checkoutOf(ctx context.Context, repo, ref string, fresh bool) (string, error) {
	key := repo + "\x00" + ref
	g.mu.Lock()
	wt, ok := g.baseAt[key]
	g.mu.Unlock()
	if ok && !fresh {
		return wt, nil
	}
	wt, err := g.checkedOutIn(ctx, repo, ref)
	if err != nil {
		return "", err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.baseAt == nil {
		g.baseAt = map[string]string{}
	}
	if wt != "" {
		g.baseAt[key] = wt
	} else {
		delete(g.baseAt, key)
	}
	return wt, nil
}

// checkoutStatus reads the status of the worktree at wt (tracked files
// only, submodules included, as Inspect).
func (g Git) checkoutStatus(ctx context.Context, wt string) (StatusV2, error) {
	out, err := g.Run(ctx, wt, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=no", "--ignore-submodules=none")
	if err != nil {
		return StatusV2{}, err
	}
	return ParseStatusV2(out), nil
}

// Rewind puts the base back from sha to old with update-ref, only if it is
// still at sha: the undo of an Advance when a neighbour repository of the
// same lot could not be integrated (all or nothing).
func (g *Repos) Rewind(ctx context.Context, repo *spec.Repo, sha, old string) error {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	wt, err := g.checkedOutIn(ctx, repo.Path, "refs/heads/"+repo.Base)
	if err != nil {
		return err
	}
	if wt != "" {
		// Only a fast-forward was made there and the tree is clean: reset
		// the checkout to the old commit if nothing changed since.
		f, err := g.Inspect(ctx, wt, repo.Base)
		if err != nil || len(f.Dirty) > 0 || f.BaseSHA != sha {
			return fmt.Errorf("cannot put %s back to %.12s: it moved or has changes", repo.Base, old)
		}
		// Like the fast-forward, the reset of the lead's checkout is not
		// stopped halfway by cadence's cancel.
		_, err = g.Run(context.WithoutCancel(ctx), wt, "reset", "--keep", old)
		return err
	}
	_, err = g.Run(ctx, repo.Path, "update-ref", "--no-deref", "-m", "cadence: undo integration", "refs/heads/"+repo.Base, old, sha)
	return err
}

// checkedOutIn returns the worktree that has ref (refs/heads/<name>)
// checked out, or "".
func (g Git) checkedOutIn(ctx context.Context, repo, ref string) (string, error) {
	list, err := g.worktreeList(ctx, repo)
	if err != nil {
		return "", err
	}
	for _, e := range list {
		if "refs/heads/"+e.Branch == ref && e.Branch != "" {
			return filepath.Clean(e.Path), nil
		}
	}
	return "", nil
}
