package gitint

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// Tree is the tree id of the commit checked out in the worktree at dir
// (`git rev-parse HEAD^{tree}`): what a test gate result is keyed by.
func (g *Repos) Tree(ctx context.Context, dir string) (string, error) {
	out, err := g.Run(ctx, dir, "rev-parse", "--verify", "HEAD^{tree}")
	return strings.TrimSpace(out), err
}

// TreeOf is the tree id of commit in the repository (`git rev-parse
// <commit>^{tree}`): what a test gate result of that commit is keyed by.
func (g *Repos) TreeOf(ctx context.Context, repo *spec.Repo, commit string) (string, error) {
	out, err := g.Run(ctx, repo.Path, "rev-parse", "--verify", "--end-of-options", commit+"^{tree}")
	return strings.TrimSpace(out), err
}

// IsAncestor says whether commit a is b or an ancestor of it in the
// repository (isAncestor: false when git cannot say).
func (g *Repos) IsAncestor(ctx context.Context, repo *spec.Repo, a, b string) bool {
	return a == b || g.isAncestor(ctx, repo.Path, a, b)
}

// Unstack puts a lot's branch back at tip, where it was before an
// integration batch rebased it onto lots ahead of it that then did not
// reach the base: in the lot's worktree at dir with `git reset --keep`
// (the worktree is clean: it is at integrate), or, when that worktree is
// gone, by compare-and-swap of the branch ref from its current commit. The
// batch's replay holds only the lot's own commits, which tip holds too;
// with keep (the branch may hold more: someone committed on it since), the
// current commit is first kept under the lot's next backup ref
// (refs/cadence/backup/<wave>/<lot>/<n>), returned.
func (g *Repos) Unstack(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot, tip string, keep bool) (string, error) {
	cur, err := g.branchCommit(ctx, repo.Path, branch)
	if err != nil {
		return "", fmt.Errorf("lot branch %s: %w", branch, err)
	}
	if cur == tip {
		return "", nil
	}
	backup := ""
	if keep {
		if backup, err = g.keepRef(ctx, repo, wave, lot, cur); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(dir); err == nil {
		if head, err := g.WorktreeHead(dir); err == nil && head == "refs/heads/"+branch {
			_, err := g.Run(ctx, dir, "reset", "--keep", "-q", tip)
			return backup, err
		}
	}
	_, err = g.Run(ctx, repo.Path, "update-ref", "--no-deref", "-m", "cadence: batch not integrated", "refs/heads/"+branch, tip, cur)
	return backup, err
}
