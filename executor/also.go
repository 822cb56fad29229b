package executor

import (
	"context"
	"maps"
	"slices"

	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/spec"
)

// Neighbour repositories (a lot's also, DESIGN.md §5): each has a worktree
// of its own beside the lot's (layout.AlsoWorktree) on the lot's branch.
// The briefs name each one's path and role, the sessions get it as an
// added folder (Session.AddDirs: --add-dir, and write access in the
// sandbox), each repository's test gate runs in its own worktree, the
// commits a write step adds there are recorded per repository
// (state.Step.AlsoCommits), and the integration advances every base or
// none (executor/mergequeue, intent.go).

// repoLabel is the name a step records for repository rp of the lot: ""
// for the lot's own repository, the neighbour's name otherwise
// (state.Step.Repo).
func (lr *lotRun) repoLabel(rp *spec.Repo) string {
	if rp == lr.n.lot.Repo {
		return ""
	}
	return rp.Name
}

// setNeighbourBase records the commit the lot's branch in neighbour rp
// started from (what Git.Worktree returned when it was made or found):
// the lot's commits there are counted from it.
func (lr *lotRun) setNeighbourBase(rp *spec.Repo, sha string) {
	if lr.bases == nil {
		lr.bases = map[*spec.Repo]string{}
	}
	lr.bases[rp] = sha
}

// neighbours describes the lot's neighbour repositories for a brief, in
// the wave file's order: name, worktree, base branch, test gate and the
// lot's commits there so far.
func (lr *lotRun) neighbours(ctx context.Context) []briefs.Neighbour {
	var ns []briefs.Neighbour
	for _, rp := range lr.n.lot.Also {
		n := briefs.Neighbour{Repo: rp.Name, Dir: lr.dirs[rp], Base: rp.Base, Test: rp.Test}
		if base := lr.bases[rp]; base != "" {
			if head, err := lr.r.o.Git.Head(ctx, n.Dir); err == nil && head != base {
				n.Commits, _ = lr.r.o.Git.Commits(ctx, n.Dir, base, head)
			}
		}
		ns = append(ns, n)
	}
	return ns
}

// neighbourHeads is the HEAD of each neighbour worktree ("" when it cannot
// be read).
func (lr *lotRun) neighbourHeads(ctx context.Context) map[*spec.Repo]string {
	heads := map[*spec.Repo]string{}
	for _, rp := range lr.n.lot.Also {
		heads[rp], _ = lr.r.o.Git.Head(ctx, lr.dirs[rp])
	}
	return heads
}

// neighbourCommits lists, per neighbour name, the commits added in its
// worktree since before (neighbourHeads); nil when there are none.
func (lr *lotRun) neighbourCommits(ctx context.Context, before map[*spec.Repo]string) map[string][]string {
	var all map[string][]string
	for _, rp := range lr.n.lot.Also {
		head := before[rp]
		after, _ := lr.r.o.Git.Head(ctx, lr.dirs[rp])
		if head == "" || after == "" || after == head {
			continue
		}
		if cs, _ := lr.r.o.Git.Commits(ctx, lr.dirs[rp], head, after); len(cs) > 0 {
			if all == nil {
				all = map[string][]string{}
			}
			all[rp.Name] = cs
		}
	}
	return all
}

// flatCommits is every commit of a neighbourCommits map, each prefixed
// with its repository ("repo: sha subject"), by repository name.
func flatCommits(m map[string][]string) []string {
	var out []string
	for _, repo := range slices.Sorted(maps.Keys(m)) {
		for _, c := range m[repo] {
			out = append(out, repo+": "+c)
		}
	}
	return out
}
