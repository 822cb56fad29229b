package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Handler runs one job. Its context ends when the job is canceled
// (cause *CanceledError), when the worker is fenced (ErrFenced) or stops
// (ErrStopped), or at the job's Deadline: the handler then stops its step
// tree and returns. An error or a panic becomes the result's Error.
type Handler func(ctx context.Context, job Job, p *Progress) (Result, error)

// WorkerOptions configure Serve.
type WorkerOptions struct {
	// ID names the worker (its heartbeat key: a valid run key).
	ID string
	// Slots is how many jobs the worker runs at once, at most.
	Slots   int
	Handler Handler
	// Agents and Toolchains are told in the heartbeat.
	Agents     map[string]string
	Toolchains []string
	// MaxBundleBytes bounds a checkpoint (Progress.Checkpoint); 0:
	// DefaultMaxBundleBytes.
	MaxBundleBytes int64
}

// fetchWait bounds one pull request.
const fetchWait = 5 * time.Second

// Serve pulls jobs and runs them with opts.Handler, at most opts.Slots at
// once, until ctx ends; it returns once every handler returned. Each job's
// run key is claimed by compare-and-set, its lease extended every lease/3
// while the handler runs; the handler is canceled once a lease passed
// without a successful extension (self-fencing), or when the run's cancel
// key is written. The result is written only while the delivery owns the
// run key, then the message is acknowledged. Jobs in hand when ctx ends
// are released without a result.
func (q *Queue) Serve(ctx context.Context, opts WorkerOptions) error {
	switch {
	case !ValidRunKey(opts.ID):
		return fmt.Errorf("queue %s: worker id %q: letters, digits, '-', '_', '=' and dots", q.name, opts.ID)
	case opts.Slots < 1:
		return fmt.Errorf("queue %s: worker %s: slots %d: at least 1", q.name, opts.ID, opts.Slots)
	case opts.Handler == nil:
		return fmt.Errorf("queue %s: worker %s: no handler", q.name, opts.ID)
	}
	if opts.MaxBundleBytes <= 0 {
		opts.MaxBundleBytes = DefaultMaxBundleBytes
	}
	var busy atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { q.heartbeats(ctx, opts, &busy) })
	errs := make(chan error, opts.Slots)
	for range opts.Slots {
		wg.Go(func() {
			if err := q.pull(ctx, opts, &busy); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opTimeout())
	defer cancel()
	_ = q.workers.Delete(dctx, opts.ID)
	return <-errs
}

// pull is one slot: it fetches one job at a time and runs it.
func (q *Queue) pull(ctx context.Context, opts WorkerOptions, busy *atomic.Int64) error {
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, fetchWait)
		msg, err := q.consumer.Next(jetstream.FetchContext(fctx))
		cancel()
		if err != nil {
			if q.js.Conn().IsClosed() {
				return fmt.Errorf("queue %s: worker %s: connection closed", q.name, opts.ID)
			}
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, jetstream.ErrNoMessages) {
				// the server is away: try again a little later
				select {
				case <-ctx.Done():
				case <-time.After(q.opTimeout()):
				}
			}
			continue
		}
		busy.Add(1)
		q.serveOne(ctx, opts, msg)
		busy.Add(-1)
	}
	return nil
}

// heartbeats writes the worker's heartbeat every lease/3 until ctx ends,
// then deletes it (bounded by the queue's operation timeout), so that a
// worker that stops is no longer counted live; a worker that dies leaves
// its heartbeat until the bucket's TTL.
func (q *Queue) heartbeats(ctx context.Context, opts WorkerOptions, busy *atomic.Int64) {
	tick := time.NewTicker(q.lease / 3)
	defer tick.Stop()
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opTimeout())
		_ = q.workers.Delete(dctx, opts.ID)
		cancel()
	}()
	for {
		hb := Heartbeat{ID: opts.ID, Agents: opts.Agents, Toolchains: opts.Toolchains, Slots: opts.Slots,
			Free: opts.Slots - int(busy.Load()), Time: time.Now().UTC()}
		data, _ := json.Marshal(hb)
		pctx, cancel := context.WithTimeout(ctx, q.opTimeout())
		_, _ = q.workers.Put(pctx, opts.ID, data)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// serveOne claims, runs and answers one delivery.
func (q *Queue) serveOne(ctx context.Context, opts WorkerOptions, msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		_ = msg.TermWithReason("no metadata")
		return
	}
	var job Job
	if err := json.Unmarshal(msg.Data(), &job); err != nil || !ValidRunKey(job.RunKey) {
		_ = msg.TermWithReason("not a job")
		return
	}
	d := &delivery{q: q, msg: msg, runKey: job.RunKey, sequence: meta.Sequence.Stream, number: meta.NumDelivered, worker: opts.ID}
	outcome, prev, err := d.claim(ctx)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			_ = msg.NakWithDelay(q.opTimeout())
		}
		return
	case outcome == finished || outcome == duplicate:
		_ = msg.Ack()
		return
	case outcome == ownerAlive:
		_ = msg.NakWithDelay(q.lease)
		return
	}
	if int(d.number) > q.maxDeliver {
		// every delivery so far was lost: hand the job back
		r := Result{RunKey: job.RunKey, Sequence: d.sequence, Delivery: d.number, Worker: opts.ID, Lost: int(d.number) - 1, Tokens: prev.Tokens}
		q.answer(ctx, d, r)
		return
	}
	r, stopped := q.run(ctx, opts, d, job, prev)
	if stopped {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opTimeout())
		d.release(rctx)
		cancel()
		return
	}
	q.answer(ctx, d, r)
}

// answer publishes r, trying again for one lease while the server is
// away; a refusal (ErrNotOwner) ends it.
func (q *Queue) answer(ctx context.Context, d *delivery, r Result) {
	r.boundEvents()
	deadline := time.Now().Add(q.lease)
	for {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opTimeout())
		err := d.publish(pctx, r)
		cancel()
		if err == nil || errors.Is(err, ErrNotOwner) || time.Now().After(deadline) {
			return
		}
		time.Sleep(q.lease / 10)
	}
}

// run runs the handler under the lease keeper and the cancel watcher;
// stopped says Serve's context ended it (no result is written).
func (q *Queue) run(ctx context.Context, opts WorkerOptions, d *delivery, job Job, prev Owner) (Result, bool) {
	hctx, hcancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer hcancel(nil)
	if !job.Deadline.IsZero() {
		var dcancel context.CancelFunc
		hctx, dcancel = context.WithDeadline(hctx, job.Deadline)
		defer dcancel()
	}
	stop := context.AfterFunc(ctx, func() { hcancel(ErrStopped) })
	defer stop()
	p := &Progress{q: q, max: opts.MaxBundleBytes, delivery: d.number}
	if prev.Sequence == d.sequence {
		p.previous = prev.Delivery
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() { q.keepLease(done, d, p, hcancel) })
	wg.Go(func() { q.watchCancel(hctx, done, job.RunKey, hcancel) })
	r, err := callHandler(hctx, opts.Handler, job, p)
	close(done)
	wg.Wait()
	if errors.Is(context.Cause(hctx), ErrStopped) {
		return Result{}, true
	}
	if err != nil {
		r.Result, r.Error = nil, err.Error()
	}
	r.RunKey, r.Sequence, r.Delivery, r.Worker = job.RunKey, d.sequence, d.number, opts.ID
	if r.Tokens == 0 {
		r.Tokens = p.tokens.Load()
	}
	return r, false
}

// callHandler runs h, turning a panic into an error.
func callHandler(ctx context.Context, h Handler, job Job, p *Progress) (r Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			r, err = Result{}, fmt.Errorf("handler panicked: %v", v)
		}
	}()
	return h(ctx, job, p)
}

// keepLease renews d's lease every lease/3 until done is closed, and
// fences (cancels the handler with ErrFenced) once a lease passed since
// the last renewal that succeeded was sent, or at once when another
// delivery owns the run key.
func (q *Queue) keepLease(done <-chan struct{}, d *delivery, p *Progress, cancel context.CancelCauseFunc) {
	fence := time.AfterFunc(q.lease, func() { cancel(ErrFenced) })
	defer fence.Stop()
	tick := time.NewTicker(q.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		sent := time.Now()
		rctx, rcancel := context.WithTimeout(context.Background(), q.opTimeout())
		err := d.renew(rctx, p.tokens.Load())
		rcancel()
		switch {
		case errors.Is(err, ErrNotOwner):
			cancel(ErrFenced)
			return
		case err == nil:
			if !fence.Stop() {
				return // fenced already
			}
			fence.Reset(max(q.lease-time.Since(sent), 0))
		}
	}
}

// watchCancel cancels the handler when the run's cancel key is written,
// watching it (again after a lost watch) until done is closed.
func (q *Queue) watchCancel(ctx context.Context, done <-chan struct{}, runKey string, cancel context.CancelCauseFunc) {
	for {
		w, err := q.cancel.Watch(ctx, runKey)
		if err == nil {
			for {
				var e jetstream.KeyValueEntry
				var ok bool
				select {
				case <-done:
					_ = w.Stop()
					return
				case e, ok = <-w.Updates():
				}
				if !ok {
					break
				}
				if e != nil && e.Operation() == jetstream.KeyValuePut {
					cancel(&CanceledError{Reason: string(e.Value())})
					_ = w.Stop()
					return
				}
			}
			_ = w.Stop()
		}
		select {
		case <-done:
			return
		case <-time.After(q.opTimeout()):
		}
	}
}

// Progress is what a handler reports while it runs.
type Progress struct {
	q        *Queue
	max      int64
	delivery uint64
	previous uint64
	tokens   atomic.Int64
}

// Previous is the number of the delivery of the same message whose owner
// record this delivery took over (0: none; the run key was new, or held
// by another message's delivery): the one whose checkpoints this run may
// resume from.
func (p *Progress) Previous() uint64 { return p.previous }

// Delivery is the number of the delivery the handler runs (1: the first;
// Result.Delivery of its result): a handler names what it stores by it,
// so that a fenced delivery's late upload never replaces its successor's.
func (p *Progress) Delivery() uint64 { return p.delivery }

// Tokens reports the tokens the step used so far (the owner's record
// carries it from the next renewal: Live, and a lost result's estimate).
func (p *Progress) Tokens(n int64) { p.tokens.Store(n) }

// Checkpoint stores a checkpoint bundle under name, at most the worker's
// MaxBundleBytes.
func (p *Progress) Checkpoint(ctx context.Context, name string, r io.Reader) error {
	return p.q.PutBundle(ctx, name, r, p.max)
}
