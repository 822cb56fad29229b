package executor

import (
	"context"
	"errors"
	"strings"
	"syscall"

	"github.com/cadence-run/cadence/internal/state"
)

// An interrupt never fails a lot (DESIGN.md §6): a step that did not end by
// itself — cadence's own cancel (a signal, stop), or a machine error under
// it (a full disk, an interrupted system call, a resource that is
// temporarily unavailable) — leaves the lot interrupted, with the cause
// recorded, for the next apply to resume. Only the lot's own work failing
// fails it.

// machineErrnos are the errors of the machine, not of the lot's work.
var machineErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EINTR, syscall.EAGAIN, syscall.ENOMEM, syscall.EMFILE, syscall.ENFILE}

// machineTexts are how those errors read in the output of a child process
// (git's "fatal: … No space left on device").
var machineTexts = []string{"no space left on device", "disk quota exceeded", "interrupted system call",
	"resource temporarily unavailable", "cannot allocate memory", "too many open files", "context canceled", "context deadline exceeded"}

// machineError reports whether err is an error of the machine (or
// cadence's cancel), not of the lot's work.
func machineError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	for _, e := range machineErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return machineText(err.Error())
}

// machineText reports whether a message says a machine error.
func machineText(s string) bool {
	s = strings.ToLower(s)
	for _, t := range machineTexts {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

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
