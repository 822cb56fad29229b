package executor

import (
	"context"
	"errors"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
)

// An interrupt never fails a lot (docs/running.md): a step that did not end by
// itself — cadence's own cancel (a signal, stop), or a machine error under
// it (a full disk, an interrupted system call, a resource that is
// temporarily unavailable) — leaves the lot interrupted, with the cause
// recorded, for the next apply to resume. Only the lot's own work failing
// fails it.

// machineError reports whether err is an error of the machine (or
// cadence's cancel), not of the lot's work (step.MachineError).
func machineError(err error) bool { return step.MachineError(err) }

// machineText reports whether a message says a machine error
// (step.MachineText).
func machineText(s string) bool { return step.MachineText(s) }

// interruptedErr is a step that a machine error stopped: the step is
// recorded interrupted, and the lot is interrupted with Cause.
type interruptedErr struct{ Cause string }

func (e *interruptedErr) Error() string { return "interrupted: " + e.Cause }

// interruption returns the cause when the lot's run was stopped by cadence
// (ctx) or by a machine error (err), and whether it was.
func interruption(ctx context.Context, err error) (string, bool) {
	var ie *interruptedErr
	switch {
	case errors.As(err, &ie):
		return ie.Cause, true
	case ctx.Err() != nil:
		return "stopped by cadence", true
	case machineError(err):
		return err.Error(), true
	}
	return "", false
}

// interruptedOutcome is the outcome of a step stopped with cause.
func interruptedOutcome(cause string) state.Outcome {
	return state.Outcome{Kind: state.OutcomeInterrupted, Detail: cause}
}
