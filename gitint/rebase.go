package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/spec"
)

// ConflictError is a rebase that stopped on conflicts cadence does not
// resolve. The rebase was aborted: branch, base and worktree are as before.
type ConflictError struct {
	Repo  string
	Files []string
}

// Error lists the conflicting files.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("rebasing onto the base of repo %s conflicts in %s", e.Repo, strings.Join(e.Files, ", "))
}

// LockIntegration takes the repository's integration lock, an in-process
// mutex and a flock on cadence/integrate.lock in its git common dir, and
// returns its release.
func (g *Repos) LockIntegration(ctx context.Context, repo *spec.Repo, wave string) (func(), error) {
	m := g.lock(repo.Path + "\x00integrate")
	m.Lock()
	common, err := g.commonDirOf(ctx, repo.Path)
	if err != nil {
		m.Unlock()
		return nil, err
	}
	l, err := flock.Acquire(ctx, layout.IntegrateLock(common),
		flock.Holder{Wave: wave, What: "integration", Since: time.Now()})
	if err != nil {
		m.Unlock()
		return nil, err
	}
	return func() { _ = l.Release(); m.Unlock() }, nil
}

// knownAncestor says whether base is known (Commits walked from the
// worktree's HEAD down to it) to be an ancestor of the HEAD of the worktree
// at wt, read from its files: no git process then.
func (g *Repos) knownAncestor(base, wt string) bool {
	head, err := headOf(wt)
	if err != nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return head == base || g.ancestry[[2]string{base, head}]
}

// commonDirOf is the git common dir of the repository at repo (`git
// rev-parse --path-format=absolute --git-common-dir`), asked once per
// Repos: it does not change while a wave runs.
func (g *Repos) commonDirOf(ctx context.Context, repo string) (string, error) {
	g.mu.Lock()
	c, ok := g.common[repo]
	g.mu.Unlock()
	if ok {
		return c, nil
	}
	out, err := g.Run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	c = strings.TrimSpace(out)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.common == nil {
		g.common = map[string]string{}
	}
	g.common[repo] = c
	return c, nil
}

// Rebase brings the lot's branch, checked out in the worktree wt, onto the
// repository's base: nothing to do when the branch already descends from
// it; else `git rebase`. A conflict that touches only the changelog and only
// adds lines under [Unreleased] is resolved by union, commit after commit;
// any other conflict aborts the rebase (`git rebase --abort`: the branch and
// worktree are left exactly as they were) and returns a *ConflictError. It
// reports whether the branch was rewritten.
func (g *Repos) Rebase(ctx context.Context, repo *spec.Repo, wt string) (bool, error) {
	base, err := g.branchCommit(ctx, repo.Path, repo.Base)
	if err != nil {
		return false, fmt.Errorf("base branch %s: %w", repo.Base, err)
	}
	return g.RebaseOnto(ctx, repo, wt, base, "")
}

// RebaseOnto is Rebase onto the commit onto rather than the base branch:
// an integration batch (the merge queue) stacks each lot on the rebased
// tip of the lots ahead of it. upstream, when not "", is where the
// branch's own commits begin (`git rebase --onto onto upstream`: the
// commits upstream..HEAD are replayed); "" means those not reachable from
// onto. Nothing is done, and false returned, when onto is HEAD or an
// ancestor of it. Conflicts are handled as by Rebase.
func (g *Repos) RebaseOnto(ctx context.Context, repo *spec.Repo, wt, onto, upstream string) (bool, error) {
	if g.knownAncestor(onto, wt) {
		return false, nil
	}
	if _, err := g.Run(ctx, wt, "merge-base", "--is-ancestor", onto, "HEAD"); err == nil {
		return false, nil
	}
	args := []string{"rebase", "--no-autosquash", "--no-autostash"}
	if upstream != "" && upstream != onto {
		args = append(args, "--onto", onto, upstream)
	} else {
		args = append(args, onto)
	}
	_, rerr := g.runEnv(ctx, wt, []string{"GIT_EDITOR=true"}, args...)
	for rerr != nil {
		files, err := g.conflicted(ctx, wt)
		if err != nil || len(files) == 0 {
			_, _ = g.Run(ctx, wt, "rebase", "--abort")
			if err == nil {
				err = rerr
			}
			return false, fmt.Errorf("rebase onto %s: %w", repo.Base, err)
		}
		if repo.Changelog == "" || len(files) != 1 || files[0] != filepath.ToSlash(repo.Changelog) {
			_, _ = g.Run(ctx, wt, "rebase", "--abort")
			return false, &ConflictError{Repo: repo.Name, Files: files}
		}
		if !g.unionChangelog(ctx, wt, files[0]) {
			_, _ = g.Run(ctx, wt, "rebase", "--abort")
			return false, &ConflictError{Repo: repo.Name, Files: files}
		}
		_, rerr = g.runEnv(ctx, wt, []string{"GIT_EDITOR=true"}, "rebase", "--continue")
	}
	return true, nil
}

// unionChangelog resolves a changelog conflict of the commit being replayed
// by union, and stages it.
func (g *Repos) unionChangelog(ctx context.Context, wt, path string) bool {
	stage := func(n int) (string, bool) {
		out, err := g.Run(ctx, wt, "show", fmt.Sprintf(":%d:%s", n, path))
		return out, err == nil
	}
	ancestor, ok1 := stage(1)
	ours, ok2 := stage(2)   // the base, with what was replayed so far
	theirs, ok3 := stage(3) // the lot's commit being replayed
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	merged, ok := UnionChangelog(ancestor, ours, theirs)
	if !ok {
		return false
	}
	if err := os.WriteFile(filepath.Join(wt, path), []byte(merged), 0o644); err != nil {
		return false
	}
	_, err := g.Run(ctx, wt, "add", "--", path)
	return err == nil
}

// conflicted lists the unmerged paths of a worktree, sorted.
func (g Git) conflicted(ctx context.Context, wt string) ([]string, error) {
	out, err := g.Run(ctx, wt, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

// PatchID is the stable patch-id of the diff from..to: the same change has
// the same id, rebased or not.
func (g *Repos) PatchID(ctx context.Context, repo *spec.Repo, from, to string) (string, error) {
	diff, err := g.Run(ctx, repo.Path, "diff", "--no-color", "--no-ext-diff", "--no-textconv", from, to)
	if err != nil {
		return "", err
	}
	if diff == "" {
		return "", nil
	}
	out, err := g.runStdin(ctx, repo.Path, diff, "patch-id", "--stable")
	if err != nil {
		return "", err
	}
	f := strings.Fields(out)
	if len(f) == 0 {
		return "", errors.New("git patch-id printed nothing")
	}
	return f[0], nil
}

// ConflictFiles returns the conflicting files (for the executor).
func (e *ConflictError) ConflictFiles() []string { return e.Files }
