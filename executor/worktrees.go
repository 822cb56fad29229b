package executor

import (
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// worktreesOf returns the worktrees of a lot that has a repository: its
// own (the one the state records for it; where the layout puts a new one
// when the state has none, recorded false) and one per repository it
// uses, a neighbour's beside its own (layout.AlsoWorktree). A worktree is
// found from the state, never by computing its path again, so a change of
// the cadence home or of the layout's scheme loses none.
func (r *runner) worktreesOf(lot *spec.Lot) (own string, dirs map[*spec.Repo]string, recorded bool) {
	r.o.Store.View(func(st *state.State) {
		if l := st.Lots[lot.ID]; l != nil {
			own = l.Worktree
		}
	})
	recorded = own != ""
	if !recorded {
		own = r.o.Layout.Worktree(lot.Repo.Name, lot.Repo.Path, lot.ID)
	}
	dirs = map[*spec.Repo]string{lot.Repo: own}
	for _, also := range lot.Also {
		dirs[also] = layout.AlsoWorktree(own, also.Name)
	}
	return own, dirs, recorded
}

// lotWorktrees is worktreesOf for a lot about to run on branch: a worktree
// or branch the state has no record of is recorded before it is made, so
// that a cadence killed while making it (or before recording it) finds it
// again from the state whatever the home, or the branches in the
// repositories, are then. Only a failure to record state is an error.
func (r *runner) lotWorktrees(lot *spec.Lot, branch string) (string, map[*spec.Repo]string, error) {
	own, dirs, recorded := r.worktreesOf(lot)
	var known bool
	r.o.Store.View(func(st *state.State) { known = st.Lots[lot.ID] != nil && st.Lots[lot.ID].Branch == branch })
	if !recorded || !known {
		if err := r.o.Store.UpdateLot(lot.ID, func(l *state.Lot) { l.Worktree, l.Branch = own, branch }); err != nil {
			return "", nil, err
		}
	}
	return own, dirs, nil
}
