package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
)

// The client side of steering (docs/running.md, Steering a live wave): a
// command (drop, stop, answer) reaches a live apply through the wave's
// channel and waits for its acknowledgement. When no apply is live it
// takes the wave lock and does the work itself, on the state.
//
// How a command knows an apply is live: the wave lock is held, and its
// holder is an apply ([ApplyHolds]). Another holder (answer, clean,
// another drop) holds it for a moment: the command waits for it
// (Client.LockWait).

// Defaults of a [Client].
const (
	// DefaultLockWait is how long a wave lock held by another short
	// command (answer, clean, drop) is waited for.
	DefaultLockWait = 30 * time.Second
	// DefaultPoll is how often the acknowledgement, and whether the apply
	// sent to is still live, are looked for.
	DefaultPoll = 50 * time.Millisecond
)

// ApplyHolder is the wave lock's holder record for an apply (What
// "apply"): steering commands send to the holder of such a lock.
func ApplyHolder(file string, since time.Time) flock.Holder {
	return flock.Holder{PID: os.Getpid(), File: file, Since: since, What: "apply"}
}

// ApplyHolds says whether h, the holder of a wave lock, is an apply: What
// "apply", or empty (an apply's record rewritten once it knows the wave's
// name).
func ApplyHolds(h flock.Holder) bool { return h.What == "" || h.What == "apply" }

// Client brings requests to the wave whose lock file is Lock and whose
// channel is Channel (layout.Wave.Lock and layout.Wave.Requests).
type Client struct {
	Lock    string
	Channel Channel
	// Key is the live apply's steering key file (layout.Wave.SteerKey):
	// each request sent is signed with it (key.go). Empty: unsigned.
	Key string
	// What names the command in the wave lock's holder record while it
	// holds the lock ("drop": the record says "cadence drop").
	What string
	// LockWait is how long a wave lock held by another command is waited
	// for (zero: DefaultLockWait); Poll is how often an acknowledgement is
	// looked for (zero: DefaultPoll).
	LockWait, Poll time.Duration
}

// Delivery is how a request reached the wave.
type Delivery struct {
	// Ack is the acknowledgement; Live says a running apply took it (pid
	// Ack.PID).
	Ack  Ack
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
	// (or was killed) before taking it: the request was withdrawn.
	Ended bool
}

// holder is the wave lock's holder record for the client's command.
func (c Client) holder() flock.Holder {
	return flock.Holder{PID: os.Getpid(), What: "cadence " + c.What, Since: time.Now()}
}

// Send brings req to the wave: to its live apply, waiting up to wait for
// the acknowledgement, or, when no apply is live, to the caller
// (Delivery.Lock set): nothing is sent then. When ctx ends while Send
// waits for the acknowledgement, the request stays queued (Delivery.Queued)
// and the error is ctx.Err().
func (c Client) Send(ctx context.Context, req Request, wait time.Duration) (Delivery, error) {
	l, err := flock.TryAcquire(c.Lock, c.holder())
	var held *flock.HeldError
	switch {
	case err == nil:
		return Delivery{Lock: l}, nil
	case !errors.As(err, &held):
		return Delivery{}, err
	case !held.Unknown && !ApplyHolds(held.Holder):
		l, err := flock.AcquireTimeout(ctx, c.Lock, c.holder(), orDefault(c.LockWait, DefaultLockWait), nil)
		if err != nil {
			return Delivery{}, err
		}
		return Delivery{Lock: l}, nil
	}
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(orDefault(c.Poll, DefaultPoll))
	defer tick.Stop()
	ch, d, err := c.keyed(ctx, deadline, tick.C)
	if err != nil || d != nil {
		return *d, err
	}
	req, err = ch.Send(req)
	if err != nil {
		return Delivery{}, fmt.Errorf("send the request: %w", err)
	}
	for {
		if a, ok, err := c.Channel.ReadAck(req.ID); err != nil || ok {
			return Delivery{Ack: a, Live: true}, err
		}
		if l, err := flock.TryAcquire(c.Lock, c.holder()); err == nil {
			return c.ended(req, l)
		}
		if time.Now().After(deadline) {
			return Delivery{Queued: true}, nil
		}
		select {
		case <-ctx.Done():
			return Delivery{Queued: true}, ctx.Err()
		case <-tick.C:
		}
	}
}

// keyed is the channel to send with, holding the live apply's key read
// from c.Key; an apply makes it just after it takes the wave lock, so a
// missing key is waited for until deadline. d is set instead when the
// apply ended meanwhile (the wave lock, taken) or the wait ran out.
func (c Client) keyed(ctx context.Context, deadline time.Time, tick <-chan time.Time) (Channel, *Delivery, error) {
	ch := c.Channel
	if c.Key == "" {
		return ch, nil, nil
	}
	for {
		key, err := ReadKey(c.Key)
		switch {
		case err == nil:
			ch.Keys = [][]byte{key}
			return ch, nil, nil
		case !errors.Is(err, fs.ErrNotExist):
			return ch, &Delivery{}, fmt.Errorf("read the apply's steering key: %w", err)
		}
		if l, err := flock.TryAcquire(c.Lock, c.holder()); err == nil {
			return ch, &Delivery{Lock: l}, nil
		}
		if time.Now().After(deadline) {
			return ch, &Delivery{}, fmt.Errorf("the running apply has no steering key %s (an older cadence?): nothing sent", c.Key)
		}
		select {
		case <-ctx.Done():
			return ch, &Delivery{}, ctx.Err()
		case <-tick:
		}
	}
}

// ended is Send's answer when the apply it sent req to ended, l being the
// wave lock the client then took: a request the apply did not take is
// the command's again; one it took has its effect recorded.
func (c Client) ended(req Request, l *flock.Lock) (Delivery, error) {
	pending, err := c.Channel.Withdraw(req.ID)
	if err != nil || pending {
		return Delivery{Lock: l, Ended: true}, err
	}
	l.Release()
	a, ok, err := c.Channel.ReadAck(req.ID)
	if !ok && err == nil {
		a.Note = "the apply took the request and ended before acknowledging it: its effect is recorded (cadence status shows it)"
	}
	return Delivery{Ack: a, Live: true}, err
}

// orDefault is d, or def when d is zero or less.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
