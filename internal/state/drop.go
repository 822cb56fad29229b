package state

import (
	"fmt"
	"strings"
	"time"
)

// DroppedCause is the cause recorded on a lot the lead dropped (`cadence
// drop`, docs/running.md, "Steering a live wave"): the lot is handed back with it, its commits kept.
const DroppedCause = "dropped by the lead"

// AlreadyDropped reports whether the lead dropped the lot already (it is
// not done): a drop again holds, without doing anything (a request taken
// twice, one command retried).
func (l *Lot) AlreadyDropped() bool {
	if l == nil || l.Status == LotDone {
		return false
	}
	return l.Dropped != "" || l.Status == LotHandedBack && strings.HasPrefix(l.Cause, DroppedCause)
}

// Droppable says why the lot recorded as l cannot be dropped ("" when it
// can): a done lot, one already handed back or failed (finished: nothing to
// drop), and one whose integration began (its bases may have moved already:
// only an apply completes it, executor/intent.go) are refused. A nil lot
// (never run), a queued, blocked, suspended, interrupted or waiting lot, and
// a running one (its step is the caller's to stop) can be dropped. Check
// AlreadyDropped first: a dropped lot is handed back.
func Droppable(l *Lot) string {
	switch {
	case l == nil:
		return ""
	case l.Status == LotDone || l.IntegratedSHA != "":
		return "it is done"
	case l.Status == LotHandedBack || l.Status == LotFailed:
		return fmt.Sprintf("it is already %s (%s)", l.Status, firstNonEmpty(l.Cause, l.Outcome, "see cadence logs"))
	case l.Integrating != nil || lastStepIs(l, StepIntegrate):
		return "its integration has begun: too late to drop it (cadence apply completes it)"
	}
	return ""
}

// lastStepIs reports whether the lot's last recorded step is of kind k.
func lastStepIs(l *Lot, k StepKind) bool {
	return len(l.Steps) > 0 && l.Steps[len(l.Steps)-1].Kind == k
}

// Drop hands the lot back as dropped by the lead, with why added to
// DroppedCause when not empty (what the lot was doing). A step still
// recorded running (its cadence was killed: no process of it is left, the
// supervisor took them) is recorded interrupted. The branch, worktree and
// commits stay: nothing of the lot's work is lost. Call it only when
// Droppable(l) is "".
func (l *Lot) Drop(why string, now time.Time) {
	if why == "" {
		why = l.Dropped
	}
	l.Status, l.Cause = LotHandedBack, droppedCause(why)
	if l.Dropped == "" {
		l.Dropped = firstNonEmpty(why, "before its first step")
	}
	l.BlockedBy = ""
	if n := len(l.Steps); n > 0 && l.Steps[n-1].Status == StepRunning {
		s := &l.Steps[n-1]
		t := now.UTC()
		s.Status, s.Cause, s.Ended = StepInterrupted, "cadence stopped before the step ended", &t
	}
}

// droppedCause is the cause of a lot dropped while doing why ("" when it
// had not started).
func droppedCause(why string) string {
	if why == "" || why == "before its first step" {
		return DroppedCause
	}
	return DroppedCause + " (" + why + ")"
}
