package executor

import (
	"time"

	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/internal/state"
)

// drop drops the lot id (steer.go). A lot already dropped stays so (taken
// again: the request was retried, or taken twice across a crash); a lot the
// state refuses (state.Droppable) is refused; a running lot is marked
// (dropRunning), a queued one handed back (dropQueued), any other at once
// (DropAtRest), its dependents in this run blocked.
func (r *runner) drop(id string, now bool) control.Result {
	res := control.Result{Lot: id}
	if r.o.Config.Lot(id) == nil {
		res.Reason = "no lot " + id + " in the wave file"
		return res
	}
	n := r.byID[id]
	if n != nil && n.started && !n.finished {
		if res, handled := r.dropRunning(n, now); handled {
			return res
		}
		// It ended meanwhile (its end is on its way to the dispatcher):
		// as a lot at rest.
	}
	if n != nil && !n.started && n.blockedBy == "" {
		return r.dropQueued(n)
	}
	res = DropAtRest(r.o.Store, id, r.now())
	if res.Taken && res.Reason != alreadyDropped {
		r.blockAll(r.dependentsOf(id), id+" "+state.DroppedCause)
	}
	return res
}

// alreadyDropped is the reason of a drop of a lot dropped before.
const alreadyDropped = "already dropped"

// dropRunning marks a running lot dropped, durably (state.Lot.Dropped)
// before the caller acknowledges it: the lot ends after its current step,
// or at once with now (its context is cancelled: the step is stopped and
// recorded interrupted), and is handed back then (lotRun.conclude). handled
// is false when the lot's end was recorded already: the caller drops it as
// a lot at rest. The lot's steer lock makes the two exclusive, and keeps a
// lot that is being integrated from being dropped.
func (r *runner) dropRunning(n *node, now bool) (res control.Result, handled bool) {
	res = control.Result{Lot: n.lot.ID}
	s := &n.steer
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return res, false
	}
	if s.dropped != "" && (!now || s.now) {
		res.Taken, res.Reason = true, alreadyDropped
		return res, true
	}
	var refusal string
	r.o.Store.View(func(st *state.State) { refusal = state.Droppable(st.Lots[n.lot.ID]) })
	switch {
	case s.at == state.StepIntegrate:
		refusal = "it is being integrated: too late to drop it"
	case s.dropped != "":
		refusal = "" // a drop -now after a drop: stop the step now
	}
	if refusal != "" {
		res.Reason = refusal
		return res, true
	}
	what := "its " + string(s.at) + " step"
	why := "after " + what
	res.Reason = "running: it is handed back when " + what + " ends, its commits kept"
	switch {
	case s.at == "":
		// Still making its worktrees: no step ran.
		why, res.Reason = "before its first step", "starting: it is handed back before its first step"
	case now:
		why = what + " was stopped (cadence drop -now)"
		res.Reason = "running: " + what + " is stopped and recorded interrupted; the lot is handed back, its commits kept"
	}
	if err := r.o.Store.UpdateLot(n.lot.ID, func(l *state.Lot) { l.Dropped = why }); err != nil {
		res.Reason = "cannot record it: " + err.Error()
		return res, true
	}
	s.dropped, s.now = why, now
	switch {
	case now && s.cancel != nil:
		s.cancel()
	case s.wake != nil:
		s.wake()
	}
	res.Taken = true
	r.emit(Event{Kind: EvOutput, Lot: n.lot.ID, Message: "dropped by the lead: " + res.Reason})
	return res, true
}

// dropQueued hands back a lot of this run that has not started; it never
// will.
func (r *runner) dropQueued(n *node) control.Result {
	res := DropAtRest(r.o.Store, n.lot.ID, r.now())
	if !res.Taken {
		return res
	}
	n.blockedBy = state.DroppedCause
	r.ready.remove(n)
	r.emit(Event{Kind: EvLotEnd, Lot: n.lot.ID, Status: string(state.LotHandedBack), Message: state.DroppedCause})
	r.blockAll(n.dependents, n.lot.ID+" "+state.DroppedCause)
	return res
}

// dependentsOf are the nodes of this run that depend on lot id directly.
func (r *runner) dependentsOf(id string) []*node {
	var ds []*node
	for _, m := range r.nodes {
		for _, d := range m.lot.DependsOn {
			if d.ID == id {
				ds = append(ds, m)
				break
			}
		}
	}
	return ds
}

// DropAtRest drops the lot id of a wave when no step of it runs: it is
// handed back (state.Lot.Drop) unless it was dropped before (taken, "already
// dropped"; one dropped while its step ran, whose cadence stopped before
// handing it back, is handed back now) or state.Droppable refuses; the
// result says which. The dependents of the lot are the caller's (the
// planner shows them blocked). `cadence drop` uses it when no apply is
// live, the run for lots it does not run.
func DropAtRest(store *state.Store, id string, now time.Time) control.Result {
	res := control.Result{Lot: id}
	var refusal string
	again := false
	store.View(func(st *state.State) {
		l := st.Lots[id]
		again, refusal = l.AlreadyDropped(), state.Droppable(l)
	})
	if refusal != "" && !again {
		res.Reason = refusal
		return res
	}
	if err := store.UpdateLot(id, func(l *state.Lot) {
		if l.Status != state.LotHandedBack {
			l.Drop("", now)
		}
	}); err != nil {
		res.Reason = "cannot record it: " + err.Error()
		return res
	}
	res.Taken, res.Reason = true, "handed back; its dependents are blocked"
	if again {
		res.Reason = alreadyDropped
	}
	return res
}

// settleDrops hands back the lots the lead dropped while a step of theirs
// ran, when cadence stopped before it handed them back (the plan holds
// them already: state.Resume).
func (r *runner) settleDrops() error {
	var ids []string
	r.o.Store.View(func(st *state.State) {
		for id, l := range st.Lots {
			if l.Dropped != "" && l.Status != state.LotHandedBack && l.Status != state.LotDone {
				ids = append(ids, id)
			}
		}
	})
	for _, id := range ids {
		if err := r.o.Store.UpdateLot(id, func(l *state.Lot) { l.Drop("", r.now()) }); err != nil {
			return err
		}
	}
	return nil
}
