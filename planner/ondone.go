package planner

import (
	"fmt"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// BaseMachine is a Machine that also says whether a commit is on a
// repository's base: a done lot's integrated commit must be (docs/running.md,
// State and resume). A Machine without it, and an offline plan, take done
// lots as the state records them.
type BaseMachine interface {
	Machine
	// OnBase says whether commit is r's base commit or an ancestor of it;
	// a commit the repository lacks is not; err when git cannot say.
	OnBase(r *spec.Repo, commit string) (bool, error)
}

// NotOnBase is the reason a lot recorded done is not, when its integrated
// commit sha is not on its repository's base: what the plan holds it with,
// and what apply records (executor).
func NotOnBase(r *spec.Repo, sha string) string {
	return fmt.Sprintf("not done: its integrated commit %.12s is not on repo %s's %s (the done record was written by something other than cadence, or the base was moved back past it)",
		sha, r.Name, r.Sensitive.Show("base", r.Base))
}

// checkDone holds every lot planned done whose integrated commit is not on
// its own repository's base (BaseMachine), with NotOnBase, and blocks its
// dependents. A base git cannot read leaves the lot done.
func (b *builder) checkDone(m Machine) {
	bm, ok := m.(BaseMachine)
	if !ok {
		return
	}
	held := false
	for _, l := range b.selected {
		lp, sl := b.actions[l], b.st.Lots[l.ID]
		if lp.Action != ActionDone || l.Repo == nil || sl == nil || !state.Integrated(sl) {
			continue
		}
		if on, err := bm.OnBase(l.Repo, sl.IntegratedSHA); err == nil && !on {
			lp.Action, lp.HeldStatus, lp.Reason = ActionHeld, state.LotHandedBack, NotOnBase(l.Repo, sl.IntegratedSHA)
			held = true
		}
	}
	if held {
		b.blockDependents()
	}
}
