package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// The remotes across applies (docs/integration.md, Guards): what each
// repository's remotes show without network is recorded in the state when
// an apply starts. A step that pushed, then cadence killed (SIGKILL)
// before the step's check, leaves the state saying running: the next
// apply compares the remotes with the record before anything runs. A
// change is the wave's incident naming what changed, and the lots whose
// steps were running when cadence was killed (one of them may have
// pushed) are held: failed with the incident, not run or integrated until
// the lead replaces them. After an apply that ended, a change is the
// lead's (no step ran since): the record follows.

// remotesOnStart compares the remotes with the state's record when the
// last apply was killed (recording the incident and the lots to hold in
// r.pushHeld), and returns the record to write now.
func (r *runner) remotesOnStart(ctx context.Context) map[string]string {
	var killed bool
	var recorded map[string]string
	var running []string
	r.o.Store.View(func(st *state.State) {
		killed = st.Status == state.WaveRunning
		recorded = st.Remotes
		for id, l := range st.Lots {
			if slices.ContainsFunc(l.Steps, func(s state.Step) bool { return s.Status == state.StepRunning }) {
				running = append(running, id)
			}
		}
	})
	sort.Strings(running)
	now := r.guard.LocalRemotes(ctx)
	record := make(map[string]string, len(now))
	for name, st := range now {
		record[name] = remoteRecord(st)
	}
	if !killed || len(recorded) == 0 {
		return record
	}
	var changed []string
	names := make([]string, 0, len(record))
	for name := range record {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		was, ok := recorded[name]
		if !ok || was == record[name] {
			continue
		}
		what := "their state is too long to name what changed"
		if !strings.HasPrefix(was, "sha256:") && !strings.HasPrefix(record[name], "sha256:") {
			what = strings.Join(guard.RemoteChanges(was, now[name]), "; ")
		}
		changed = append(changed, fmt.Sprintf("the remotes of repo %s changed (%s)", name, what))
	}
	if len(changed) == 0 {
		return record
	}
	msg := "since the last apply, which was killed, " + strings.Join(changed, "; ") + ": a push cadence could not check"
	if len(running) > 0 {
		msg += "; lot(s) " + strings.Join(running, ", ") + ", whose steps ran when it was killed, are held (apply -replace runs one again)"
		r.pushHeld = map[string]string{}
		for _, id := range running {
			r.pushHeld[id] = IncidentCause + msg
		}
	}
	r.incident(msg)
	return record
}

// remoteRecord is what State.Remotes keeps of a remote state: the text,
// or its digest when longer than state.MaxRemoteRecord.
func remoteRecord(st string) string {
	if len(st) <= state.MaxRemoteRecord {
		return st
	}
	sum := sha256.Sum256([]byte(st))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// holdPushed fails lot n when remotesOnStart held it, and says so; a lot
// the lead replaces (-replace) is not held: the lead said so.
func (r *runner) holdPushed(n *node) (bool, error) {
	id := n.lot.ID
	cause, ok := r.pushHeld[id]
	if !ok || n.plan.Action == planner.ActionReplace {
		return false, nil
	}
	err := r.o.Store.UpdateLot(id, func(l *state.Lot) {
		l.Status, l.Cause = state.LotFailed, cause
	})
	r.emit(Event{Kind: EvLotEnd, Lot: id, Status: string(state.LotFailed), Message: cause})
	return true, err
}
