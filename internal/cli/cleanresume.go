package cli

import (
	"path/filepath"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// resumableReason is why clean keeps the worktrees and branch of a lot
// that a plain apply resumes.
const resumableReason = "the lot can be resumed; cadence apply goes on"

// resumable reports whether a lot of status s is not done and a plain
// apply goes on with it where it stopped, in its worktree and on its
// branch: queued (started, or not yet), running when cadence was killed,
// waiting for an answer, suspended or interrupted. Handed-back and failed
// lots need the lead (apply -replace starts them afresh), blocked ones
// wait on them.
func resumable(s state.LotStatus) bool {
	switch s {
	case state.LotQueued, state.LotRunning, state.LotQuestion, state.LotSuspended, state.LotInterrupted:
		return true
	}
	return false
}

// keepResumable marks kept (resumableReason) every worktree and branch of
// lefts that belongs to a resumable lot of st (its recorded worktree and
// its neighbour worktrees beside it, layout.AlsoWorktree; its recorded
// branch and its branch in namespace ns), unless kept already.
func keepResumable(lefts []gitint.Leftover, st *state.State, ns string, repos []*spec.Repo) {
	if st == nil {
		return
	}
	worktrees, branches := map[string]bool{}, map[string]bool{}
	add := func(p string) {
		worktrees[filepath.Clean(p)] = true
		if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			worktrees[filepath.Join(r, filepath.Base(p))] = true
		}
	}
	for id, l := range st.Lots {
		if l == nil || !resumable(l.Status) {
			continue
		}
		branches[planner.LotBranch(ns, id)] = true
		if l.Branch != "" {
			branches[l.Branch] = true
		}
		if l.Worktree != "" {
			add(l.Worktree)
			for _, r := range repos {
				add(layout.AlsoWorktree(l.Worktree, r.Name))
			}
		}
	}
	for i, lo := range lefts {
		if lo.Keep != "" {
			continue
		}
		if lo.Kind == "worktree" && worktrees[filepath.Clean(lo.Path)] || lo.Kind == "branch" && branches[lo.Path] {
			lefts[i].Keep = resumableReason
		}
	}
}
