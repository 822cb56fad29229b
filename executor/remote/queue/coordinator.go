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
// there already: after a coordinator restart). It ends with ctx's error.
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
	for {
		select {
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
				return Result{}, fmt.Errorf("queue %s: result of %s: %w", q.name, runKey, err)
			}
			return r, nil
		}
	}
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
