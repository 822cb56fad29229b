package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
)

// The steering commands (drop, stop, answer) reach a live apply through
// the wave's request channel (executor/control) and wait for its
// acknowledgement. When no apply is live they take the wave lock and do
// the work themselves, on the state (DESIGN.md §4).
//
// How a command knows an apply is live: the wave lock is held, and its
// holder is an apply (What "apply", or empty: what apply writes once it
// knows the wave's name). Another holder (answer, clean, another drop)
// holds it for a moment: the command waits for it (steerLockWait).

// steerLockWait is how long a steering command waits for a wave lock held
// by another short command (answer, clean, drop).
const steerLockWait = 30 * time.Second

// steerPoll is how often a steering command looks for the acknowledgement
// and whether the apply it sent to is still live.
const steerPoll = 50 * time.Millisecond

// delivery is how a request reached the wave.
type delivery struct {
	// Ack is the acknowledgement; Live says a running apply took it (pid
	// Ack.PID); otherwise the command did the work itself, holding lock.
	Ack  control.Ack
	Live bool
	// Lock is the wave lock, held, when the command must do the work
	// itself (no apply is live, or the apply ended before taking the
	// request); the caller releases it.
	Lock *flock.Lock
	// Queued is set when the live apply took nothing before the wait
	// ended: the request stays in the channel for it, or for the next
	// apply.
	Queued bool
	// Ended is set with Lock when the apply the request was sent to ended
	// (or was killed) before taking it: the command withdrew it.
	Ended bool
}

// steerHolder is the wave lock's holder for a steering command.
func steerHolder(what string) flock.Holder {
	return flock.Holder{PID: os.Getpid(), What: "cadence " + what, Since: time.Now()}
}

// isApply says whether the holder of a wave lock is an apply.
func isApply(h flock.Holder) bool { return h.What == "" || h.What == "apply" }

// deliver brings req to the wave of lay: to its live apply, waiting up to
// wait for the acknowledgement, or, when no apply is live, to the caller
// (delivery.Lock set): nothing is sent then.
func deliver(lay layout.Wave, what string, req control.Request, wait time.Duration) (delivery, error) {
	ch := control.Channel{Dir: lay.Requests()}
	l, err := flock.TryAcquire(lay.Lock(), steerHolder(what))
	var held *flock.HeldError
	switch {
	case err == nil:
		return delivery{Lock: l}, nil
	case !errors.As(err, &held):
		return delivery{}, err
	case !held.Unknown && !isApply(held.Holder):
		l, err := flock.AcquireTimeout(context.Background(), lay.Lock(), steerHolder(what), steerLockWait, nil)
		if err != nil {
			return delivery{}, err
		}
		return delivery{Lock: l}, nil
	}
	req, err = ch.Send(req)
	if err != nil {
		return delivery{}, fmt.Errorf("send the request: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		if a, ok, err := ch.ReadAck(req.ID); err != nil || ok {
			return delivery{Ack: a, Live: true}, err
		}
		if l, err := flock.TryAcquire(lay.Lock(), steerHolder(what)); err == nil {
			// The apply ended. A request it did not take is the
			// command's again; one it took has its effect recorded.
			pending, werr := ch.Withdraw(req.ID)
			if werr != nil || pending {
				return delivery{Lock: l, Ended: true}, werr
			}
			l.Release()
			a, ok, err := ch.ReadAck(req.ID)
			if !ok && err == nil {
				a.Note = "the apply took the request and ended before acknowledging it: its effect is recorded (cadence status shows it)"
			}
			return delivery{Ack: a, Live: true}, err
		}
		if time.Now().After(deadline) {
			return delivery{Queued: true}, nil
		}
		time.Sleep(steerPoll)
	}
}

// printResults prints what became of each lot of a request: taken on
// standard output, refused on standard error (steerReport sets the exit
// code).
func printResults(e *env, verb string, rs []control.Result) {
	for _, r := range rs {
		if r.Taken {
			fmt.Fprintf(e.stdout, "%s %s: %s\n", verb, r.Lot, r.Reason)
			continue
		}
		fmt.Fprintf(e.stderr, "cadence %s: %s refused: %s\n", verb, r.Lot, r.Reason)
	}
}

// steerOutput is the -json of drop, stop and a live answer.
type steerOutput struct {
	FormatVersion int    `json:"format_version"`
	File          string `json:"file"`
	// Live says a running apply took the request (its pid); false: the
	// command recorded it in the state itself (no apply was live), or,
	// with Queued, nothing took it yet.
	Live    bool             `json:"live"`
	PID     int              `json:"pid,omitempty"`
	Queued  bool             `json:"queued"`
	Results []control.Result `json:"results"`
	Note    string           `json:"note,omitempty"`
}

// queuedNote is what a command says when the live apply did not take its
// request in time.
func queuedNote(lay layout.Wave, wait time.Duration) string {
	return fmt.Sprintf("the running apply has not taken the request within %s (it is planning or waiting for confirmation?): it stays in %s, and the apply takes it when it runs lots, or the next apply does", wait, lay.Requests())
}

// waitingRequests are the requests of the wave's channel no apply took yet
// (none when it cannot be read).
func waitingRequests(lay layout.Wave) []control.Request {
	reqs, _, _ := control.Channel{Dir: lay.Requests()}.Pending()
	if reqs == nil {
		reqs = []control.Request{}
	}
	return reqs
}

// describeRequest is a request as the command that sent it reads.
func describeRequest(r control.Request) string {
	switch r.Kind {
	case control.KindDrop:
		s := "drop " + strings.Join(r.Lots, " ")
		if r.Now {
			s = "drop -now " + strings.Join(r.Lots, " ")
		}
		return s
	case control.KindAnswer:
		return fmt.Sprintf("answer %s %q", r.Lot, r.Text)
	}
	return string(r.Kind)
}
