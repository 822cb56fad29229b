package executor

import (
	"fmt"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/diskspace"
)

// A write of cadence's own that fails (a step's log: a full disk, most
// often) is a machine error that stops
// the wave: the step that wrote is ended with its process tree and
// recorded interrupted, no new lot starts, the running lots' steps are
// stopped (recorded interrupted), and apply ends with the error (Result.
// Machine), for the next apply to resume once there is room. The write
// is never retried: space that another process frees is not taken back.

// machineStop records msg as what stops the wave (the first one only) and
// stops the running steps.
func (r *runner) machineStop(msg string) {
	r.machineMu.Lock()
	first := r.machineMsg == ""
	if first {
		r.machineMsg = msg
	}
	halt := r.halt
	r.machineMu.Unlock()
	if !first {
		return
	}
	r.emit(Event{Kind: EvOutput, Message: msg + "; the wave stops"})
	if halt != nil {
		halt()
	}
}

// machineStopped is the machine error that stops the wave, or "".
func (r *runner) machineStopped() string {
	r.machineMu.Lock()
	defer r.machineMu.Unlock()
	return r.machineMsg
}

// writeFailure describes a failed write of path (step.WriteFailure).
func writeFailure(err error, path string) string { return step.WriteFailure(err, path) }

// roomToStart says whether a lot may start: the free space of every
// Options.FreePlaces is at least Options.MinFree. Below it, the wave stops
// starting lots (machineStop without ending the running steps: they may
// finish in what is left).
func (r *runner) roomToStart() bool {
	if r.o.MinFree == 0 || len(r.o.FreePlaces) == 0 {
		return true
	}
	_, low := diskspace.Check(r.o.FreePlaces, 0, r.o.MinFree)
	if len(low) == 0 {
		return true
	}
	r.machineMu.Lock()
	if r.machineMsg == "" {
		r.machineMsg = fmt.Sprintf("too little free space to start a lot: %s, below the floor of %s (CADENCE_MIN_FREE)", low[0], diskspace.Bytes(r.o.MinFree))
		r.emit(Event{Kind: EvOutput, Message: r.machineMsg + "; no new lot starts"})
	}
	r.machineMu.Unlock()
	return false
}
