package gitint

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// BackupPrefix is where cadence keeps the commits of a lot's earlier
// attempts: refs/cadence/backup/<wave>/<lot>/<n>, n = 1, 2, … . cadence
// never deletes them (`cadence clean` lists them; `git update-ref -d`
// removes one).
const BackupPrefix = "refs/cadence/backup/"

// BackupRefs lists the backup refs of a lot (lot "" : of every lot of the
// wave), oldest first per lot.
func (g Git) BackupRefs(ctx context.Context, repo, wave, lot string) ([]string, error) {
	return g.lotRefs(ctx, repo, BackupPrefix, wave, lot)
}

// lotRefs lists the refs of a lot under prefix (BackupPrefix,
// RescuePrefix): <prefix><wave>/<lot>/<n> (lot "": of every lot of the
// wave), sorted by name, with one git call.
func (g Git) lotRefs(ctx context.Context, repo, prefix, wave, lot string) ([]string, error) {
	prefix += wave + "/"
	if lot != "" {
		prefix += lot + "/"
	}
	out, err := g.Run(ctx, repo, "for-each-ref", "--format=%(refname)", "--sort=refname", prefix)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// nextNumber is the number after the highest <n> ending one of refs
// (1 when there is none): a lot's next free backup or rescue ref.
func nextNumber(refs []string) int {
	n := 0
	for _, r := range refs {
		if k, err := strconv.Atoi(r[strings.LastIndexByte(r, '/')+1:]); err == nil {
			n = max(n, k)
		}
	}
	return n + 1
}

// backup keeps what the worktree at dir holds (its HEAD and, when tracked
// files have uncommitted changes, those too, as the commit `git stash
// create` makes on top of HEAD) under the lot's next backup ref, and
// returns the ref. Untracked files are not kept. With skipInBase, a clean
// tree whose HEAD the base holds has nothing to keep: no ref, "".
func (g Git) backup(ctx context.Context, repo *spec.Repo, dir, wave, lot string, skipInBase bool) (string, error) {
	keep, err := g.Run(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", err
	}
	keep = strings.TrimSpace(keep)
	if st, err := g.Run(ctx, dir, "stash", "create", "cadence: uncommitted changes of an earlier attempt of "+lot); err == nil && strings.TrimSpace(st) != "" {
		keep = strings.TrimSpace(st)
	} else if skipInBase && g.inBase(ctx, repo, keep) {
		return "", nil
	}
	return g.keepRef(ctx, repo, wave, lot, keep)
}

// inBase reports whether the base branch of repo holds the commit sha (sha
// has no commit beyond the base); false when git cannot tell (no base
// branch), so that what cannot be checked is kept.
func (g Git) inBase(ctx context.Context, repo *spec.Repo, sha string) bool {
	_, err := g.Run(ctx, repo.Path, "merge-base", "--is-ancestor", sha, "refs/heads/"+repo.Base)
	return err == nil
}

// keepRef stores sha under the lot's next free backup ref (created, never
// overwritten) and returns the ref.
func (g Git) keepRef(ctx context.Context, repo *spec.Repo, wave, lot, sha string) (string, error) {
	refs, err := g.BackupRefs(ctx, repo.Path, wave, lot)
	if err != nil {
		return "", err
	}
	ref := fmt.Sprintf("%s%s/%s/%d", BackupPrefix, wave, lot, nextNumber(refs))
	if _, err := g.Run(ctx, repo.Path, "update-ref", "-m", "cadence: keep an earlier attempt of "+lot, ref, sha, ""); err != nil {
		return "", fmt.Errorf("keep the earlier attempt under %s: %w", ref, err)
	}
	return ref, nil
}

// ResetForReplay puts the lot's worktree at dir back to the commit to (the
// commit its replayed step started from), so that a replayed command runs
// as it did the first time. When HEAD is elsewhere or the tree has changes,
// what was there is first kept under the lot's next backup ref (returned;
// "" when nothing needed keeping), then the branch and the worktree are
// reset (`reset --hard`, `clean -fd`: ignored files stay). A worktree that
// Worktree has just made at to, before any step ran in it (the first run of
// a lot), is as the reset would leave it: no git process.
func (g *Repos) ResetForReplay(ctx context.Context, repo *spec.Repo, dir, wave, lot, to string) (string, error) {
	if g.takePristine(dir, to) {
		return "", nil
	}
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	head, err := g.Run(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", err
	}
	dirty, err := g.dirtyFiles(ctx, dir)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(head) == to && len(dirty) == 0 {
		return "", nil
	}
	ref, err := g.backup(ctx, repo, dir, wave, lot, false)
	if err != nil {
		return "", err
	}
	if _, err := g.Run(ctx, dir, "reset", "-q", "--hard", to); err != nil {
		return ref, err
	}
	if _, err := g.Run(ctx, dir, "clean", "-fdq"); err != nil {
		return ref, err
	}
	return ref, nil
}

// SetAside prepares a lot that is replaced (-replace) to start on a fresh
// branch from the current base: what its branch held (and uncommitted
// changes of its worktree) is kept under the lot's next backup ref
// (returned; "" when there was no branch, or nothing to keep: a branch
// with no commit beyond the base and no uncommitted change to a tracked
// file), then its worktree at dir is removed and its branch deleted. The
// next Worktree makes both afresh.
func (g *Repos) SetAside(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot string) (string, error) {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	tip, err := g.Run(ctx, repo.Path, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		tip = ""
	}
	tip = strings.TrimSpace(tip)
	ref := ""
	onBranch := false
	if out, err := g.Run(ctx, dir, "rev-parse", "--abbrev-ref", "HEAD"); err == nil && strings.TrimSpace(out) == branch {
		onBranch = true
		if g.rebaseInProgress(ctx, dir) {
			_ = g.abortRebase(ctx, dir, branch)
		}
		if ref, err = g.backup(ctx, repo, dir, wave, lot, true); err != nil {
			return "", err
		}
	} else if tip != "" && !g.inBase(ctx, repo, tip) {
		if ref, err = g.keepRef(ctx, repo, wave, lot, tip); err != nil {
			return "", err
		}
	}
	if _, serr := os.Stat(dir); serr == nil || onBranch {
		_, _ = g.Run(ctx, repo.Path, "worktree", "unlock", dir)
		if _, err := g.Run(ctx, repo.Path, "worktree", "remove", "--force", "--force", dir); err != nil {
			if err := os.RemoveAll(dir); err != nil {
				return ref, err
			}
		}
	}
	_, _ = g.Run(ctx, repo.Path, "worktree", "prune")
	if tip != "" {
		if _, err := g.Run(ctx, repo.Path, "update-ref", "--no-deref", "-d", "refs/heads/"+branch, tip); err != nil {
			return ref, fmt.Errorf("delete branch %s (kept under %s): %w", branch, ref, err)
		}
	}
	return ref, nil
}
