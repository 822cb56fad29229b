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
	// base, uncommitted changes, a worktree that stays has the branch
	// checked out.
	Keep string
	// Gone says a worktree's folder is not there any more: git only keeps
	// its record (locked by cadence, so never pruned by git). Removing it
	// drops that record; its branch, with its commits, stays.
	Gone bool
}

// Leftovers lists, in one repository, a wave's worktrees (those on its
// lot branches <branches>/* for which known(path) is true: the state records
// them, or they are where the wave's layout puts them; and those whose
// folder is gone and whose lock reason names cadence and the lot), its
// lot branches <branches>/*, its backup refs (always kept), cadence's guard
// (kept while a wave holds the repository) and a pre-push hook of an older
// cadence, each with the reason it must be kept, if any: a branch
// holding commits that are not in the base, or checked out in a worktree
// that stays (any worktree of the repository but a wave's worktree that
// clean removes); a worktree with uncommitted changes or on a branch that
// must stay. branches is the namespace of the wave's lot branches, the one
// its state records (cadence/<wave>, or cadence/<wave>-<key> beside another
// wave of its name; planner.RecordedNamespace): the branches of another
// wave of the same name are never listed. git runs in the repository, and
// in a worktree only when its folder is there.
func (g Git) Leftovers(ctx context.Context, repo *spec.Repo, wave, branches string, known func(path string) bool) ([]Leftover, error) {
	var out []Leftover
	base := "refs/heads/" + repo.Base
	list, err := g.worktreeList(ctx, repo.Path)
	if err != nil {
		return nil, err
	}
	// staying: the worktrees that stay whatever clean does, by the branch
	// they have checked out.
	staying := map[string]string{}
	for _, e := range list {
		mine := strings.HasPrefix(e.Branch, branches+"/")
		switch {
		case mine && e.gone() && (known(e.Path) || (e.Locked && ownLock(e.Reason, e.Branch))):
			l := Leftover{Kind: "worktree", Path: e.Path, Gone: true}
			if e.Locked && !ownLock(e.Reason, e.Branch) {
				l.Keep = fmt.Sprintf("its folder is gone, but git's record of it is locked by something other than cadence (%q)", e.Reason)
			}
			out = append(out, l)
		case mine && !e.gone() && known(e.Path):
			l := Leftover{Kind: "worktree", Path: e.Path}
			if dirty, err := g.dirtyFiles(ctx, e.Path); err != nil {
				l.Keep = "cannot read its status: " + err.Error()
			} else if len(dirty) > 0 {
				l.Keep = fmt.Sprintf("uncommitted changes to %s", strings.Join(first(dirty, 5), ", "))
			}
			out = append(out, l)
		case e.Branch != "":
			staying[e.Branch] = e.Path
		}
	}
	refs, err := g.Run(ctx, repo.Path, "for-each-ref", "--format=%(refname)", "refs/heads/"+branches+"/")
	if err != nil {
		return nil, fmt.Errorf("list the branches %s/… of wave %s: %w", branches, wave, err)
	}
	for _, ref := range strings.Fields(refs) {
		l := Leftover{Kind: "branch", Path: strings.TrimPrefix(ref, "refs/heads/")}
		if n, err := g.Run(ctx, repo.Path, "rev-list", "--count", base+".."+ref); err != nil {
			l.Keep = "cannot compare it with " + repo.Base
		} else if c := strings.TrimSpace(n); c != "0" {
			l.Keep = fmt.Sprintf("%s commit(s) not in %s", c, repo.Base)
		}
		out = append(out, l)
	}
	// A worktree on a branch that must stay, stays too; then a branch
	// checked out in a worktree that stays, stays too (git would let it be
	// deleted, and the worktree would show "No commits yet").
	keepBranch := map[string]string{}
	for _, l := range out {
		if l.Kind == "branch" && l.Keep != "" {
			keepBranch[l.Path] = l.Keep
		}
	}
	for i, l := range out {
		if l.Kind == "worktree" && !l.Gone && l.Keep == "" {
			if b := branchAt(list, l.Path); keepBranch[b] != "" {
				out[i].Keep = "its branch has " + keepBranch[b]
			}
		}
	}
	for _, l := range out {
		if l.Kind == "worktree" && !l.Gone && l.Keep != "" {
			staying[branchAt(list, l.Path)] = l.Path
		}
	}
	for i, l := range out {
		if p, ok := staying[l.Path]; ok && l.Kind == "branch" && l.Keep == "" {
			out[i].Keep = "checked out in the worktree " + p + ", which stays"
		}
	}
	backups, err := g.BackupRefs(ctx, repo.Path, wave, "")
	if err != nil {
		return nil, fmt.Errorf("list the backup refs of wave %s: %w", wave, err)
	}
	for _, ref := range backups {
		out = append(out, Leftover{Kind: "backup", Path: ref,
			Keep: "the commits of an earlier attempt; cadence never deletes a backup (git update-ref -d " + ref + " does)"})
	}
	if hook, ours, err := g.GuardHook(ctx, repo.Path); err == nil && ours {
		out = append(out, Leftover{Kind: "hook", Path: hook})
	}
	if common, err := g.commonDir(ctx, repo.Path); err == nil && g.GuardInstalled(ctx, common) {
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

// branchAt is the branch checked out in the worktree at path ("" when
// none, or when list has no such worktree).
func branchAt(list []worktreeEntry, path string) string {
	for _, e := range list {
		if samePath(e.Path, path) {
			return e.Branch
		}
	}
	return ""
}

// RemoveLeftover removes one leftover that has no reason to stay. Worktrees
// go first (a branch checked out in one cannot be deleted); a worktree whose
// folder is gone has only git's record dropped (its branch stays); a branch
// is deleted only if it is still in the base and no worktree has it checked
// out (looked up again: a worktree clean could not remove keeps its branch).
// The error says what was being done.
func (g *Repos) RemoveLeftover(ctx context.Context, repo *spec.Repo, l Leftover) error {
	if l.Keep != "" {
		return fmt.Errorf("%s %s is kept: %s", l.Kind, l.Path, l.Keep)
	}
	switch l.Kind {
	case "worktree":
		return g.RemoveWorktree(ctx, repo, l.Path)
	case "branch":
		return g.removeBranch(ctx, repo, l.Path)
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
		return g.RemoveGuardDir(ctx, common)
	}
	return fmt.Errorf("unknown leftover %s", l.Kind)
}

// Prune drops worktree entries whose folders are gone.
func (g Git) Prune(ctx context.Context, repo string) {
	if _, err := os.Stat(repo); err == nil {
		_, _ = g.Run(ctx, repo, "worktree", "prune")
	}
}

// removeBranch deletes the lot branch branch when it is in the repo's base
// and checked out nowhere, with a compare-and-swap on the value it was
// checked at.
func (g *Repos) removeBranch(ctx context.Context, repo *spec.Repo, branch string) error {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	ref := "refs/heads/" + branch
	sha, err := g.Run(ctx, repo.Path, "rev-parse", "--verify", ref)
	if err != nil {
		return fmt.Errorf("read branch %s: %w", branch, err)
	}
	if _, err := g.Run(ctx, repo.Path, "merge-base", "--is-ancestor", ref, "refs/heads/"+repo.Base); err != nil {
		return fmt.Errorf("branch %s is not in %s any more: kept", branch, repo.Base)
	}
	list, err := g.worktreeList(ctx, repo.Path)
	if err != nil {
		return err
	}
	for _, e := range list {
		if e.Branch == branch {
			return fmt.Errorf("branch %s is checked out in the worktree %s: kept", branch, e.Path)
		}
	}
	if _, err := g.Run(ctx, repo.Path, "update-ref", "--no-deref", "-d", ref, strings.TrimSpace(sha)); err != nil {
		return fmt.Errorf("delete branch %s: %w", branch, err)
	}
	return nil
}
