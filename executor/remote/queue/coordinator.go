package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Submit publishes job. It is idempotent by run key: the stream drops a
// second message with the same run key within an hour (Nats-Msg-Id), and a
// worker acknowledges without running a job whose run key already has a
// result or a live owner.
func (q *Queue) Submit(ctx context.Context, job Job) error {
	if !ValidRunKey(job.RunKey) {
		return fmt.Errorf("queue %s: run key %q: letters, digits, '-', '_', '=' in tokens joined by dots, at most 200", q.name, job.RunKey)
	}
	data, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("queue %s: job %s: %w", q.name, job.RunKey, err)
	}
	if _, err := q.js.Publish(ctx, Subject(q.name), data, jetstream.WithMsgID(job.RunKey), jetstream.WithExpectStream(StreamName(q.name))); err != nil {
		return fmt.Errorf("queue %s: submit %s: %w", q.name, job.RunKey, err)
	}
	return nil
}

// Await returns runKey's result once a worker wrote it (at once when it is
// there already: after a coordinator restart). Every lease it also looks
// for a run whose deliveries are spent (declareLost). It ends with ctx's
// error.
func (q *Queue) Await(ctx context.Context, runKey string) (Result, error) {
	if !ValidRunKey(runKey) {
		return Result{}, fmt.Errorf("queue %s: run key %q: not a valid key", q.name, runKey)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := q.results.Watch(ctx, runKey)
	if err != nil {
		return Result{}, fmt.Errorf("queue %s: await %s: %w", q.name, runKey, err)
	}
	defer w.Stop()
	tick := time.NewTicker(q.lease)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			q.declareLost(ctx, runKey)
			continue
		case <-ctx.Done():
			return Result{}, fmt.Errorf("queue %s: await %s: %w", q.name, runKey, context.Cause(ctx))
		case e, ok := <-w.Updates():
			if !ok {
				return Result{}, fmt.Errorf("queue %s: await %s: the watch ended", q.name, runKey)
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var r Result
			if err := json.Unmarshal(e.Value(), &r); err != nil {
				// not a result a worker of cadence wrote: wait for the owner's
				continue
			}
			if !q.ownersResult(ctx, runKey, r) {
				// written by a client that does not own the run key (any
				// worker's credentials may write results): the owner's
				// result, when it comes, replaces it
				continue
			}
			return r, nil
		}
	}
}

// ownersResult says whether r is the result of the delivery the runs
// bucket names as runKey's owner: a record marked done by the delivery
// (sequence, number, worker) that r names. A delivery marks its record
// done before it writes its result (delivery.publish), so the owner's
// result always passes; a result no delivery owned (written directly into
// the results bucket) never does. An unreadable record fails.
func (q *Queue) ownersResult(ctx context.Context, runKey string, r Result) bool {
	if r.RunKey != runKey {
		return false
	}
	gctx, cancel := context.WithTimeout(ctx, q.opTimeout())
	defer cancel()
	e, err := q.runs.Get(gctx, runKey)
	if err != nil {
		return false
	}
	var o Owner
	if json.Unmarshal(e.Value(), &o) != nil {
		return false
	}
	return o.State == Done && o.Sequence == r.Sequence && o.Delivery == r.Delivery && o.Worker == r.Worker
}

// Cancel asks the worker running runKey to stop it, for reason: the worker
// watches the key and cancels the step within seconds; a job not yet
// started is canceled as it starts. The key lives a day.
func (q *Queue) Cancel(ctx context.Context, runKey, reason string) error {
	if !ValidRunKey(runKey) {
		return fmt.Errorf("queue %s: run key %q: not a valid key", q.name, runKey)
	}
	if reason == "" {
		reason = "canceled"
	}
	if _, err := q.cancel.PutString(ctx, runKey, reason); err != nil {
		return fmt.Errorf("queue %s: cancel %s: %w", q.name, runKey, err)
	}
	return nil
}

// Workers are the live workers' last heartbeats, by id.
func (q *Queue) Workers(ctx context.Context) ([]Heartbeat, error) {
	keys, err := q.workers.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("queue %s: workers: %w", q.name, err)
	}
	var hbs []Heartbeat
	for _, k := range keys {
		e, err := q.workers.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // gone since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("queue %s: worker %s: %w", q.name, k, err)
		}
		var hb Heartbeat
		if json.Unmarshal(e.Value(), &hb) == nil {
			hbs = append(hbs, hb)
		}
	}
	sort.Slice(hbs, func(i, j int) bool { return hbs[i].ID < hbs[j].ID })
	return hbs, nil
}

// Pool is the queue's pool as the consumer counts it.
type Pool struct {
	// Cap is the pool-wide cap (MaxAckPending), InFlight the jobs
	// delivered and not yet acknowledged, Free what is left of Cap.
	Cap, InFlight, Free int
	// Queued are the jobs not yet delivered.
	Queued uint64
}

// Pool reads the pool from the consumer's info.
func (q *Queue) Pool(ctx context.Context) (Pool, error) {
	info, err := q.consumer.Info(ctx)
	if err != nil {
		return Pool{}, fmt.Errorf("queue %s: pool: %w", q.name, err)
	}
	p := Pool{Cap: info.Config.MaxAckPending, InFlight: info.NumAckPending, Queued: info.NumPending}
	p.Free = max(p.Cap-p.InFlight, 0)
	return p, nil
}

// Run is what the runs bucket says of a run key.
type Run struct {
	Owner
	// Age is the time since the owner last renewed its lease, on the
	// server's clock as this machine reads it.
	Age time.Duration
	// Live says a delivery runs the job now: its owner is Running and
	// renewed within one lease.
	Live bool
}

// ErrNoRun is returned by Live for a run key no delivery claimed.
var ErrNoRun = errors.New("no delivery claimed the run")

// Live tells whether a delivery runs runKey and since when it last renewed
// its lease: a restarted coordinator re-attaches (Await) to a live run
// rather than submitting it again.
func (q *Queue) Live(ctx context.Context, runKey string) (Run, error) {
	if !ValidRunKey(runKey) {
		return Run{}, fmt.Errorf("queue %s: run key %q: not a valid key", q.name, runKey)
	}
	e, err := q.runs.Get(ctx, runKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Run{}, fmt.Errorf("queue %s: %s: %w", q.name, runKey, ErrNoRun)
	}
	if err != nil {
		return Run{}, fmt.Errorf("queue %s: run %s: %w", q.name, runKey, err)
	}
	var r Run
	if err := json.Unmarshal(e.Value(), &r.Owner); err != nil {
		return Run{}, fmt.Errorf("queue %s: run %s: %w", q.name, runKey, err)
	}
	r.Age = max(time.Since(e.Created()), 0)
	r.Live = r.State == Running && r.Age < q.lease
	return r, nil
}

// lostAfter is how long a run's record of a delivery at or past
// max_deliver stands still before the coordinator declares the job lost:
// longer than the redelivery (a lease) and a takeover's wait (a lease and
// a quarter) of the delivery that would write the lost result itself.
func (q *Queue) lostAfter() time.Duration { return 2*q.lease + q.lease/2 }

// declareLost writes the lost result of runKey when its deliveries are
// spent and none wrote it: no result, and the owner's record, of a
// delivery at or past max_deliver, stood still for lostAfter (the
// delivery that writes the lost result died too, and the stream never
// delivers the job again). It takes the run key by compare-and-set, so a
// delivery that claims it first writes the result instead, and a dead
// owner's late result is refused. Errors are left for the next look.
func (q *Queue) declareLost(ctx context.Context, runKey string) {
	ctx, cancel := context.WithTimeout(ctx, q.opTimeout())
	defer cancel()
	if e, err := q.results.Get(ctx, runKey); err == nil {
		var r Result
		if json.Unmarshal(e.Value(), &r) == nil && q.ownersResult(ctx, runKey, r) {
			return
		}
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return
	}
	e, err := q.runs.Get(ctx, runKey)
	if err != nil {
		return
	}
	var prev Owner
	if json.Unmarshal(e.Value(), &prev) != nil || prev.Delivery < uint64(q.maxDeliver) || time.Since(e.Created()) < q.lostAfter() {
		return
	}
	mine := Owner{Sequence: prev.Sequence, Delivery: prev.Delivery + 1, Worker: LostBy, State: Done, Tokens: prev.Tokens}
	data, _ := json.Marshal(mine)
	if _, err := q.runs.Update(ctx, runKey, data, e.Revision()); err != nil {
		return // a delivery moved it: it writes the result
	}
	r := Result{RunKey: runKey, Sequence: prev.Sequence, Delivery: mine.Delivery, Worker: LostBy, Lost: q.maxDeliver, Tokens: prev.Tokens}
	raw, _ := json.Marshal(r)
	_, _ = q.results.Put(ctx, runKey, raw)
}

// LostBy is the worker of a lost result the coordinator wrote
// (declareLost): no worker was left to write it.
const LostBy = "coordinator"
