package gitint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/spec"
)

// Leftover is something a wave left in a repository that clean may remove.
type Leftover struct {
	// Kind is "worktree", "branch", "guard" (cadence's guard folder and
	// its include entry in the repository's config), "hook" (a pre-push
	// hook of an older cadence) or "backup" (a backup ref of an earlier
	// attempt, always kept).
	Kind string
	// Path is the worktree folder, branch name or hook file.
	Path string
	// Keep is why it must stay ("" when it can go): commits not in the
	// base, uncommitted changes.
	Keep string
}

// Leftovers lists a wave's worktrees under worktreeRoot, its branches
// cadence/<wave>/*, its backup refs (always kept), cadence's guard (kept
// while a wave holds the repository) and a pre-push hook of an older
// cadence, in one repository, each
// with the reason it must be kept, if any: a branch holding commits that
// are not in the base, a worktree with uncommitted changes or on such a
// branch.
func Leftovers(ctx context.Context, repo *spec.Repo, wave, worktreeRoot string) ([]Leftover, error) {
	var out []Leftover
	base := "refs/heads/" + repo.Base
	list, err := Run(ctx, repo.Path, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var path string
	for _, f := range strings.Split(list, "\x00") {
		switch {
		case strings.HasPrefix(f, "worktree "):
			path = strings.TrimPrefix(f, "worktree ")
		case strings.HasPrefix(f, "branch refs/heads/cadence/"+wave+"/"):
			if !strings.HasPrefix(path, filepath.Clean(worktreeRoot)+string(filepath.Separator)) {
				continue
			}
			l := Leftover{Kind: "worktree", Path: path}
			if dirty, err := dirtyFiles(ctx, path); err != nil {
				l.Keep = "cannot read its status: " + err.Error()
			} else if len(dirty) > 0 {
				l.Keep = fmt.Sprintf("uncommitted changes to %s", strings.Join(first(dirty, 5), ", "))
			}
			out = append(out, l)
		}
	}
	refs, err := Run(ctx, repo.Path, "for-each-ref", "--format=%(refname)", "refs/heads/cadence/"+wave+"/")
	if err != nil {
		return nil, err
	}
	for _, ref := range strings.Fields(refs) {
		l := Leftover{Kind: "branch", Path: strings.TrimPrefix(ref, "refs/heads/")}
		if n, err := Run(ctx, repo.Path, "rev-list", "--count", base+".."+ref); err != nil {
			l.Keep = "cannot compare it with " + repo.Base
		} else if c := strings.TrimSpace(n); c != "0" {
			l.Keep = fmt.Sprintf("%s commit(s) not in %s", c, repo.Base)
		}
		out = append(out, l)
	}
	// A worktree on a branch that must stay, stays too.
	keepBranch := map[string]string{}
	for _, l := range out {
		if l.Kind == "branch" && l.Keep != "" {
			keepBranch[l.Path] = l.Keep
		}
	}
	for i, l := range out {
		if l.Kind == "worktree" && l.Keep == "" {
			if b, err := Run(ctx, l.Path, "rev-parse", "--abbrev-ref", "HEAD"); err == nil && keepBranch[strings.TrimSpace(b)] != "" {
				out[i].Keep = "its branch has " + keepBranch[strings.TrimSpace(b)]
			}
		}
	}
	backups, err := BackupRefs(ctx, repo.Path, wave, "")
	if err != nil {
		return nil, err
	}
	for _, ref := range backups {
		out = append(out, Leftover{Kind: "backup", Path: ref,
			Keep: "the commits of an earlier attempt; cadence never deletes a backup (git update-ref -d " + ref + " does)"})
	}
	if hook, ours, err := GuardHook(ctx, repo.Path); err == nil && ours {
		out = append(out, Leftover{Kind: "hook", Path: hook})
	}
	if common, err := commonDir(ctx, repo.Path); err == nil && GuardInstalled(ctx, common) {
		l := Leftover{Kind: "guard", Path: layout.RepoGuard(common)}
		if release, err := holdRepo(common, wave); err != nil {
			l.Keep = err.Error()
		} else {
			release()
		}
		out = append(out, l)
	}
	return out, nil
}

// holdRepo takes the repository's one-wave lock (layout.RepoLock) for
// clean: the guard of a repository is its running wave's, whatever wave
// clean was asked about.
func holdRepo(common, wave string) (func(), error) {
	l, err := flock.TryAcquire(layout.RepoLock(common), flock.Holder{Wave: wave, What: "clean"})
	if err != nil {
		return nil, fmt.Errorf("the repository is used by a running wave (%w)", err)
	}
	return func() { _ = l.Release() }, nil
}

func first(xs []string, n int) []string {
	if len(xs) > n {
		return append(xs[:n:n], fmt.Sprintf("and %d more", len(xs)-n))
	}
	return xs
}

// RemoveLeftover removes one leftover that has no reason to stay. Worktrees
// go first (a branch checked out in one cannot be deleted); a branch is
// deleted only if it is still in the base.
func (g *Repos) RemoveLeftover(ctx context.Context, repo *spec.Repo, l Leftover) error {
	if l.Keep != "" {
		return fmt.Errorf("%s %s is kept: %s", l.Kind, l.Path, l.Keep)
	}
	switch l.Kind {
	case "worktree":
		return g.RemoveWorktree(ctx, repo, l.Path)
	case "branch":
		ref := "refs/heads/" + l.Path
		sha, err := Run(ctx, repo.Path, "rev-parse", "--verify", ref)
		if err != nil {
			return err
		}
		if _, err := Run(ctx, repo.Path, "merge-base", "--is-ancestor", ref, "refs/heads/"+repo.Base); err != nil {
			return fmt.Errorf("branch %s is not in %s any more: kept", l.Path, repo.Base)
		}
		_, err = Run(ctx, repo.Path, "update-ref", "-d", ref, strings.TrimSpace(sha))
		return err
	case "hook":
		return RemoveGuard(l.Path)
	case "guard":
		common := filepath.Dir(filepath.Dir(l.Path))
		if layout.RepoGuard(common) != l.Path {
			return fmt.Errorf("%s is not a guard folder", l.Path)
		}
		release, err := holdRepo(common, "")
		if err != nil {
			return err
		}
		defer release()
		return RemoveGuardDir(ctx, common)
	}
	return fmt.Errorf("unknown leftover %s", l.Kind)
}

// Prune drops worktree entries whose folders are gone.
func Prune(ctx context.Context, repo string) {
	if _, err := os.Stat(repo); err == nil {
		_, _ = Run(ctx, repo, "worktree", "prune")
	}
}
