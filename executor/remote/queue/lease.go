package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrNotOwner is returned when a delivery writes to a run key another
// delivery owns now: its lease was taken over, its result is refused.
var ErrNotOwner = errors.New("the run key is owned by another delivery")

// ErrFenced is the cause of a handler's context when its worker could not
// extend its lease for one lease (connection lost) or lost the run key to
// another delivery: the handler must stop its step at once (self-fencing).
var ErrFenced = errors.New("lease lost: fenced")

// ErrStopped is the cause of a handler's context when the worker's Serve
// ended: the job is given up without a result and redelivered.
var ErrStopped = errors.New("worker stopped")

// CanceledError is the cause of a handler's context when the coordinator
// canceled the run (Queue.Cancel).
type CanceledError struct{ Reason string }

func (e *CanceledError) Error() string { return "canceled: " + e.Reason }

// delivery is one delivery of one job, and what it owns of the run key.
type delivery struct {
	q        *Queue
	msg      jetstream.Msg
	runKey   string
	sequence uint64
	number   uint64
	worker   string
	// rev is the run key's revision this delivery wrote last (0: not
	// claimed).
	rev   uint64
	owner Owner
}

// claimOutcome says what a delivery found when it claimed its run key.
type claimOutcome int

const (
	// claimed: the delivery owns the run key and runs the job.
	claimed claimOutcome = iota
	// finished: the run has a result already; the message is acknowledged.
	finished
	// duplicate: another message of the same run key runs live; this one
	// is acknowledged away.
	duplicate
	// ownerAlive: an earlier delivery of this message still renews its
	// lease; this one is given back (nak) for later.
	ownerAlive
)

// opTimeout bounds one call to the server made under the lease.
func (q *Queue) opTimeout() time.Duration { return q.lease / 3 }

// claim makes the delivery the owner of its run key by compare-and-set: a
// new key is created; a released or done owner without result is taken
// over at once; a running owner only once its revision stood still for a
// lease and a quarter (it fenced itself after one lease without renewal).
// The message's lease is extended while it waits.
func (d *delivery) claim(ctx context.Context) (claimOutcome, Owner, error) {
	runs := d.q.runs
	mine := Owner{Sequence: d.sequence, Delivery: d.number, Worker: d.worker, State: Running}
	data, _ := json.Marshal(mine)
	for {
		if e, err := d.q.results.Get(ctx, d.runKey); err == nil {
			// only the owner's result finishes the run: one written by a
			// client that never owned it is overwritten by this delivery's
			var r Result
			if json.Unmarshal(e.Value(), &r) == nil && d.q.ownersResult(ctx, d.runKey, r) {
				return finished, Owner{}, nil
			}
		} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return 0, Owner{}, fmt.Errorf("result of %s: %w", d.runKey, err)
		}
		rev, err := runs.Create(ctx, d.runKey, data)
		if err == nil {
			d.rev, d.owner = rev, mine
			return claimed, Owner{}, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return 0, Owner{}, fmt.Errorf("claim %s: %w", d.runKey, err)
		}
		e, err := runs.Get(ctx, d.runKey)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted since: create again
		}
		if err != nil {
			return 0, Owner{}, fmt.Errorf("claim %s: %w", d.runKey, err)
		}
		var prev Owner
		if err := json.Unmarshal(e.Value(), &prev); err != nil {
			prev = Owner{} // unreadable: taken over like a dead owner
		}
		if d.number > uint64(d.q.maxDeliver) {
			// the delivery that writes the lost result carries the last
			// tokens reported, for a coordinator that writes it instead
			// (declareLost)
			m := mine
			m.Tokens = prev.Tokens
			data, _ = json.Marshal(m)
		}
		if prev.State == Running {
			moved, err := d.watchOwner(ctx, e.Revision())
			if err != nil {
				return 0, Owner{}, err
			}
			if moved {
				if prev.Sequence != d.sequence {
					return duplicate, prev, nil
				}
				return ownerAlive, prev, nil
			}
		}
		rev, err = runs.Update(ctx, d.runKey, data, e.Revision())
		if err == nil {
			d.rev, d.owner = rev, mine
			return claimed, prev, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyExists) {
			return 0, Owner{}, fmt.Errorf("claim %s: %w", d.runKey, err)
		}
		// another delivery wrote first: look again
	}
}

// watchOwner waits a lease and a quarter for the run key to move from rev,
// extending the message's lease meanwhile: true when it moved (its owner
// lives).
func (d *delivery) watchOwner(ctx context.Context, rev uint64) (bool, error) {
	lease := d.q.lease
	deadline := time.Now().Add(lease + lease/4)
	tick := time.NewTicker(lease / 6)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-tick.C:
		}
		_ = d.msg.InProgress()
		e, err := d.q.runs.Get(ctx, d.runKey)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return true, nil
		}
		if err == nil && e.Revision() != rev {
			return true, nil
		}
	}
	return false, nil
}

// renew extends the lease: InProgress on the message, then the owner's
// record rewritten by compare-and-set (a request on the same connection,
// so its success says the server had the InProgress). ErrNotOwner: another
// delivery took the run key.
func (d *delivery) renew(ctx context.Context, tokens int64) error {
	if err := d.msg.InProgress(); err != nil {
		return err
	}
	o := d.owner
	o.Renewals++
	o.Tokens = tokens
	return d.write(ctx, o)
}

// write replaces the owner's record by compare-and-set on the revision
// this delivery wrote last.
func (d *delivery) write(ctx context.Context, o Owner) error {
	data, _ := json.Marshal(o)
	rev, err := d.q.runs.Update(ctx, d.runKey, data, d.rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("%s: %w", d.runKey, ErrNotOwner)
	}
	if err != nil {
		return err
	}
	d.rev, d.owner = rev, o
	return nil
}

// publish writes the result if this delivery still owns the run key (the
// owner's record marked done by compare-and-set, then the result), then
// acknowledges the message. ErrNotOwner: refused, nothing written. The
// result names this delivery (run key, sequence, number, worker), as its
// owner's record does: what Await checks.
func (d *delivery) publish(ctx context.Context, r Result) error {
	r.RunKey, r.Sequence, r.Delivery, r.Worker = d.runKey, d.sequence, d.number, d.worker
	o := d.owner
	o.State, o.Tokens = Done, r.Tokens
	if err := d.write(ctx, o); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("result of %s: %w", d.runKey, err)
	}
	if _, err := d.q.results.Put(ctx, d.runKey, data); err != nil {
		return fmt.Errorf("result of %s: %w", d.runKey, err)
	}
	// A lost acknowledgement redelivers the job, whose next delivery finds
	// the result and acknowledges it.
	_ = d.msg.DoubleAck(ctx)
	return nil
}

// release gives the run key up without a result (the worker stops): the
// next delivery takes it over at once.
func (d *delivery) release(ctx context.Context) {
	o := d.owner
	o.State = Released
	if d.write(ctx, o) == nil {
		_ = d.msg.Nak()
	}
}
