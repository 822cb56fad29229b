package executor

import (
	"context"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/internal/state"
)

// nodeSteer is the lead's word on a started lot: set by the dispatcher,
// read by the lot's goroutine between steps and when it ends (guarded by
// mu, which the dispatcher holds while it decides a drop and the lot while
// it records its end: the two never cross).
type nodeSteer struct {
	mu sync.Mutex
	// at is the step the lot runs or is about to run ("" before its first).
	at state.StepKind
	// dropped, when not empty, says the lead dropped the lot and what it
	// was doing; now says with -now.
	dropped string
	now     bool
	// ended is set once the lot's end for this run is recorded.
	ended bool
	// cancel ends the lot's context (drop -now); wake ends its waits for a
	// session or slot (drop, stop) and waitCtx is what those waits use.
	cancel, wake context.CancelFunc
	waitCtx      context.Context
}

// startSteer gives a lot about to start (again, after an answer) its
// contexts: the lot's own (ctx, cancelled by drop -now) and its waits'
// (cancelled by drop and stop).
func (n *node) startSteer(ctx context.Context) context.Context {
	s := &n.steer
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at, s.ended = "", false
	var lctx context.Context
	lctx, s.cancel = context.WithCancel(ctx)
	s.waitCtx, s.wake = context.WithCancel(lctx)
	return lctx
}

// endSteer releases the lot's contexts once its goroutine ended, and
// forgets them (a node lives as long as the run: a kept context is
// memory per lot).
func (n *node) endSteer() {
	s := &n.steer
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	s.cancel, s.wake, s.waitCtx = nil, nil, nil
}

// waitCtx is the context the lot's waits for a session or a slot use:
// ended by the lead's drop or stop, so a lot that waits starts no step.
func (lr *lotRun) waitCtx(ctx context.Context) context.Context {
	s := &lr.n.steer
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waitCtx == nil {
		return ctx
	}
	return s.waitCtx
}

// beforeStep is the lead's word before the lot's step at: when the lead
// dropped the lot or stopped the wave, the lot's end (stop true);
// otherwise it records that the lot runs at, so a drop from now on knows
// (a lot being integrated cannot be dropped).
func (lr *lotRun) beforeStep(at state.StepKind) (st state.LotStatus, stop bool, err error) {
	s := &lr.n.steer
	s.mu.Lock()
	dropped := s.dropped
	if dropped == "" && lr.r.stopping() == "" {
		s.at = at
	}
	s.mu.Unlock()
	switch {
	case dropped != "":
		st, err = lr.conclude(state.LotHandedBack, "")
		return st, true, err
	case lr.r.stopping() != "":
		st, err = lr.conclude(state.LotInterrupted, lr.r.stopping())
		return st, true, err
	case lr.held != "":
		st, err = lr.conclude(state.LotInterrupted, lr.held)
		return st, true, err
	}
	return "", false, nil
}

// conclude records the end of the lot's run, st with cause, under the
// lot's steer lock, so that a drop is either decided before (then it holds)
// or sees the end recorded (then it is a drop at rest). A lot the lead
// dropped that is not done is handed back instead (state.Lot.Drop), the
// cause saying what it was doing and how its step ended. A lot interrupted
// by its wait for a session ending on the lead's stop has the stop as its
// cause.
func (lr *lotRun) conclude(st state.LotStatus, cause string) (state.LotStatus, error) {
	s := &lr.n.steer
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if s.dropped == "" || st == state.LotDone {
		if stop := lr.r.stopping(); st == state.LotInterrupted && stop != "" && cause == "stopped by cadence" && !lr.r.hasIncident() {
			cause = stop
		}
		if m := lr.r.machineStopped(); st == state.LotInterrupted && m != "" && cause == "stopped by cadence" {
			cause = "stopped by cadence: " + m
		}
		return lr.record(st, cause)
	}
	why := s.dropped
	switch {
	case st == state.LotInterrupted && !s.now:
		why = strings.Replace(why, "after its", "during its", 1) + ", which cadence stopped"
	case st != state.LotInterrupted && st != state.LotHandedBack || st == state.LotHandedBack && cause != "":
		why += ", which ended it " + string(st)
	}
	var recorded string
	err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		l.Dropped = ""
		l.Drop(why, lr.r.now())
		recorded = l.Cause
	})
	lr.r.emit(Event{Kind: EvLotEnd, Lot: lr.id, Status: string(state.LotHandedBack), Message: recorded})
	return state.LotHandedBack, err
}

// droppedCause names, for the dependents of n, why they are blocked when
// n was dropped ("" when it was not).
func droppedCause(n *node) string {
	n.steer.mu.Lock()
	defer n.steer.mu.Unlock()
	if n.steer.dropped != "" || n.blockedBy == state.DroppedCause {
		return n.lot.ID + " " + state.DroppedCause
	}
	return ""
}
