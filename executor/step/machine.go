package step

import (
	"context"
	"errors"
	"strings"
	"syscall"
)

// machineErrnos are the errors of the machine, not of the lot's work.
var machineErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EINTR, syscall.EAGAIN, syscall.ENOMEM, syscall.EMFILE, syscall.ENFILE}

// machineTexts are how those errors read in the output of a child process
// (git's "fatal: … No space left on device").
var machineTexts = []string{"no space left on device", "disk quota exceeded", "interrupted system call",
	"resource temporarily unavailable", "cannot allocate memory", "too many open files", "context canceled", "context deadline exceeded"}

// MachineError reports whether err is an error of the machine (or
// cadence's cancel), not of the lot's work.
func MachineError(err error) bool {
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
	return MachineText(err.Error())
}

// MachineText reports whether a message says a machine error.
func MachineText(s string) bool {
	s = strings.ToLower(s)
	for _, t := range machineTexts {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}
