package executor

import (
	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/spec"
)

// Neighbour repositories (a lot's also, docs/integration.md): each has a worktree
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
// lot's commits there so far (looked: the worktrees read from where each
// branch started).
func (lr *lotRun) neighbours(looked map[string]step.Looked) []briefs.Neighbour {
	var ns []briefs.Neighbour
	for _, rp := range lr.n.lot.Also {
		n := briefs.Neighbour{Repo: rp.Name, Dir: lr.dirs[rp], Base: rp.Base, Test: rp.Test}
		n.Commits = looked[rp.Name].Commits
		ns = append(ns, n)
	}
	return ns
}
