package executor

import (
	"context"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// checkDone records handed back every planned lot the state records done
// whose integrated commit is not on its own repository's base
// (planner.NotOnBase, docs/running.md, State and resume): the plan checked
// it too, and this apply checks again, as the base may have moved since
// the plan (a saved plan). The lot's record is kept, only its status and
// cause change; the lead replaces it (-replace). A base that cannot be
// read leaves the lot done. It says which lots it handed back.
func (r *runner) checkDone(ctx context.Context) (map[string]bool, error) {
	type claim struct{ id, sha string }
	var claims []claim
	r.o.Store.View(func(st *state.State) {
		for _, lp := range r.o.Plan.Lots {
			if l := st.Lots[lp.ID]; l != nil && l.Status == state.LotDone && state.Integrated(l) {
				claims = append(claims, claim{lp.ID, l.IntegratedSHA})
			}
		}
	})
	out := map[string]bool{}
	for _, c := range claims {
		lot := r.o.Config.Lot(c.id)
		if lot == nil || lot.Repo == nil {
			continue
		}
		base, err := r.o.Git.Base(ctx, lot.Repo)
		if err != nil || r.o.Git.IsAncestor(ctx, lot.Repo, c.sha, base) {
			continue
		}
		cause := planner.NotOnBase(lot.Repo, c.sha) + "; cadence apply -replace " + c.id + " runs it again"
		if err := r.o.Store.UpdateLot(c.id, func(l *state.Lot) { l.Status, l.Cause = state.LotHandedBack, cause }); err != nil {
			return out, err
		}
		out[c.id] = true
		r.emit(Event{Kind: EvLotEnd, Lot: c.id, Status: string(state.LotHandedBack), Message: cause})
	}
	return out, nil
}
