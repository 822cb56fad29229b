package executor

import (
	"context"
	"fmt"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// recover readies a lot recorded in the state for this run. A step that
// was running when cadence stopped is marked interrupted (so is the lot,
// with the cause), with the tokens its session spent (recountRunning).
// A replaced lot (-replace) is reset: its earlier run's
// files set aside, its branch kept under a backup ref and deleted (with its
// worktree) so that it starts afresh from the current base; the backup
// refs and the patch-id of an earlier integration are kept (so the same
// change is never integrated twice). A lot the state does not know yet is
// left alone (no write).
func (r *runner) recover(n *node) error {
	known := false
	r.o.Store.View(func(st *state.State) { known = st.Lots[n.lot.ID] != nil })
	if !known {
		return nil
	}
	spent, step, recounted := r.recountRunning(n)
	if n.plan.Action == planner.ActionReplace {
		if err := r.replace(n); err != nil || !recounted {
			return err
		}
		return r.addRecounted(n, spent)
	}
	err := r.o.Store.UpdateLot(n.lot.ID, func(l *state.Lot) {
		for i := range l.Steps {
			if l.Steps[i].Status == state.StepRunning {
				if recounted && i == step {
					l.Steps[i].Usage, l.Steps[i].CostMicros, l.Steps[i].CostEstimated = spent.Usage, spent.CostMicros, spent.CostEstimated
				}
				l.Steps[i].Status = state.StepInterrupted
				l.Steps[i].Cause = stoppedCause
				t := r.now().UTC()
				l.Steps[i].Ended = &t
				l.Status, l.Cause = state.LotInterrupted, fmt.Sprintf("cadence stopped while its %s step ran", l.Steps[i].Kind)
			}
		}
		if l.Status != state.LotQuestion && l.Status != state.LotInterrupted {
			l.Status = state.LotQueued
		}
		l.BlockedBy = ""
	})
	if err != nil || !recounted {
		return err
	}
	return r.addRecounted(n, spent)
}

// stoppedCause is the cause of a step that was running when cadence
// stopped (recover).
const stoppedCause = "cadence stopped while the step ran"

// replace resets a lot for -replace (see recover).
func (r *runner) replace(n *node) error {
	id := n.lot.ID
	if err := setAsideLogs(r.o.Layout, id); err != nil {
		return err
	}
	var backups []string
	if n.lot.Repo != nil {
		branch := r.lotBranch(n)
		_, dirs, _ := r.worktreesOf(n.lot)
		lot := step.Lot{Wave: r.o.Config.Wave.Name, WaveID: r.waveID(), ID: id, Branch: branch}
		for _, rp := range n.lot.Repos() {
			lot.Repos = append(lot.Repos, step.Repo{Name: rp.Name, Worktree: dirs[rp]})
		}
		refs, err := r.steps.SetAside(context.Background(), lot)
		for _, rp := range n.lot.Repos() {
			if ref := refs[rp.Name]; ref != "" {
				backups = append(backups, ref)
				r.emit(Event{Kind: EvOutput, Lot: id, Message: "replaced: the earlier branch " + branch + " of repo " + rp.Name + " is kept under " + ref})
			}
		}
		if err != nil {
			return fmt.Errorf("-replace %s: %w", id, err)
		}
	}
	return r.o.Store.UpdateLot(id, func(l *state.Lot) {
		// The branch name stays the lot's: a replaced lot starts afresh
		// on the branch its wave's namespace gives it (planner's
		// branches.go), the earlier one set aside above.
		*l = state.Lot{Status: state.LotQueued, Branch: l.Branch, PatchID: l.PatchID, Backups: append(l.Backups, backups...)}
	})
}
