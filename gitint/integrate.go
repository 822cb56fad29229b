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

// Advance moves the repo's base branch to the lot's branch, by fast-forward
// only: `merge --ff-only` in the worktree that has the base checked out
// (refused when its tracked files are dirty: nothing is touched), or
// `update-ref` with the expected old value when none has, so a base that
// someone else moved meanwhile is never overwritten. It returns the base's
// new commit. A branch already in the base is not integrated twice. Call it
// under LockIntegration, after Rebase.
func (g *Repos) Advance(ctx context.Context, repo *spec.Repo, branch string) (string, error) {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	baseRef := "refs/heads/" + repo.Base
	base, err := Run(ctx, repo.Path, "rev-parse", "--verify", baseRef+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("base branch %s: %w", repo.Base, err)
	}
	tip, err := Run(ctx, repo.Path, "rev-parse", "--verify", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("lot branch %s: %w", branch, err)
	}
	base, tip = strings.TrimSpace(base), strings.TrimSpace(tip)
	if _, err := Run(ctx, repo.Path, "merge-base", "--is-ancestor", tip, base); err == nil {
		return base, nil // already in the base
	}
	if _, err := Run(ctx, repo.Path, "merge-base", "--is-ancestor", base, tip); err != nil {
		return "", ErrNotFastForward
	}
	wt, err := checkedOutIn(ctx, repo.Path, baseRef)
	if err != nil {
		return "", err
	}
	if wt != "" {
		f, err := Inspect(ctx, wt, repo.Base)
		if err != nil {
			return "", err
		}
		if len(f.Dirty) > 0 {
			return "", fmt.Errorf("%s has %s checked out with uncommitted changes to %s: commit or stash them, then apply again", wt, repo.Base, strings.Join(f.Dirty, ", "))
		}
		// Once begun, the fast-forward of the lead's checkout runs to its
		// end (bounded by DefaultTimeout): git does not update a checkout
		// atomically, and a merge stopped by cadence's own cancel (a
		// Ctrl-C) left tracked files half updated, which the next apply
		// refused as a dirty checkout. (A kill -9 of cadence does not stop
		// it either: git runs outside the supervisor.)
		if _, err := Run(context.WithoutCancel(ctx), wt, "merge", "--ff-only", "--quiet", tip); err != nil {
			return "", err
		}
		return tip, nil
	}
	if _, err := Run(ctx, repo.Path, "update-ref", "-m", "cadence: integrate "+branch, baseRef, tip, base); err != nil {
		return "", fmt.Errorf("the base moved while integrating: %w", err)
	}
	return tip, nil
}

// Rewind puts the base back from sha to old with update-ref, only if it is
// still at sha: the undo of an Advance when a neighbour repository of the
// same lot could not be integrated (all or nothing).
func (g *Repos) Rewind(ctx context.Context, repo *spec.Repo, sha, old string) error {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	wt, err := checkedOutIn(ctx, repo.Path, "refs/heads/"+repo.Base)
	if err != nil {
		return err
	}
	if wt != "" {
		// Only a fast-forward was made there and the tree is clean: reset
		// the checkout to the old commit if nothing changed since.
		f, err := Inspect(ctx, wt, repo.Base)
		if err != nil || len(f.Dirty) > 0 || f.BaseSHA != sha {
			return fmt.Errorf("cannot put %s back to %.12s: it moved or has changes", repo.Base, old)
		}
		// Like the fast-forward, the reset of the lead's checkout is not
		// stopped halfway by cadence's cancel.
		_, err = Run(context.WithoutCancel(ctx), wt, "reset", "--keep", old)
		return err
	}
	_, err = Run(ctx, repo.Path, "update-ref", "-m", "cadence: undo integration", "refs/heads/"+repo.Base, old, sha)
	return err
}

// checkedOutIn returns the worktree that has ref (refs/heads/<name>)
// checked out, or "".
func checkedOutIn(ctx context.Context, repo, ref string) (string, error) {
	list, err := worktreeList(ctx, repo)
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
