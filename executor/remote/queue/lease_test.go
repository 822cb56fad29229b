package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/nats-io/nats.go/jetstream"
)

// started returns a handler that tells on ch when it starts, then waits
// for its context and returns the context's cause as its error.
func blocking(ch chan<- context.Context) Handler {
	return func(ctx context.Context, job Job, p *Progress) (Result, error) {
		ch <- ctx
		<-ctx.Done()
		return Result{}, context.Cause(ctx)
	}
}

func receive(t *testing.T, ch <-chan context.Context, within time.Duration) context.Context {
	t.Helper()
	select {
	case ctx := <-ch:
		return ctx
	case <-time.After(within):
		t.Fatalf("no handler started within %s", within)
		return nil
	}
}

func TestRedeliveredWhenWorkerDies(t *testing.T) {
	e, q := newQueue(t, 2, 3)
	ncA, qA := openQueue(t, e.URL())
	startedA := make(chan context.Context, 1)
	stopA := serve(t, qA, "wA", 1, blocking(startedA))
	submit(t, q, "k")
	receive(t, startedA, 10*time.Second)
	// worker A dies: its connection gone, nothing acknowledged, released
	// or answered
	ncA.Close()
	stopA()
	serve(t, q, "wB", 1, echo)
	r := await(t, q, "k", 6*testLease)
	if r.Worker != "wB" || r.Delivery != 2 || r.Error != "" || r.Lost != 0 {
		t.Errorf("result = %+v, want wB's, delivery 2", r)
	}
}

func TestLostAfterMaxDeliver(t *testing.T) {
	e, q := newQueue(t, 2, 1)
	ncA, qA := openQueue(t, e.URL())
	startedA := make(chan context.Context, 1)
	stopA := serve(t, qA, "wA", 1, func(ctx context.Context, job Job, p *Progress) (Result, error) {
		p.Tokens(1234)
		return blocking(startedA)(ctx, job, p)
	})
	submit(t, q, "k")
	receive(t, startedA, 10*time.Second)
	time.Sleep(testLease / 2) // one renewal carries the tokens
	ncA.Close()
	stopA()
	serve(t, q, "wB", 1, func(context.Context, Job, *Progress) (Result, error) {
		t.Error("a job lost max_deliver times ran again")
		return Result{}, nil
	})
	r := await(t, q, "k", 6*testLease)
	if r.Lost != 1 || r.Worker != "wB" || r.LostMessage() != "worker lost 1 time" || r.Tokens != 1234 {
		t.Errorf("result = %+v, want lost 1 with the last tokens", r)
	}
}

func TestSelfFencingWhenConnectionCut(t *testing.T) {
	e, _ := newQueue(t, 2, 3)
	ncA, qA := openQueue(t, e.URL())
	started := make(chan context.Context, 1)
	serve(t, qA, "wA", 1, blocking(started))
	_, q := openQueue(t, e.URL())
	submit(t, q, "k")
	ctx := receive(t, started, 10*time.Second)
	time.Sleep(testLease / 2)
	cut := time.Now()
	ncA.Close()
	select {
	case <-ctx.Done():
	case <-time.After(2 * testLease):
		t.Fatal("the handler was not canceled within two leases of the cut")
	}
	if !errors.Is(context.Cause(ctx), ErrFenced) {
		t.Errorf("cause = %v, want ErrFenced", context.Cause(ctx))
	}
	if d := time.Since(cut); d > testLease+testLease/2 {
		t.Errorf("fenced %s after the cut, want within about one lease (%s)", d, testLease)
	}
}

// stubMsg is a delivered message whose lease calls do nothing.
type stubMsg struct {
	jetstream.Msg
}

func (stubMsg) InProgress() error                { return nil }
func (stubMsg) DoubleAck(context.Context) error  { return nil }
func (stubMsg) Nak() error                       { return nil }
func (stubMsg) NakWithDelay(time.Duration) error { return nil }

func TestLateResultRefused(t *testing.T) {
	_, q := newQueue(t, 2, 3)
	ctx := testCtx(t, 20*time.Second)
	d1 := &delivery{q: q, msg: stubMsg{}, runKey: "k", sequence: 1, number: 1, worker: "wA"}
	if out, _, err := d1.claim(ctx); err != nil || out != claimed {
		t.Fatalf("first claim = %v, %v", out, err)
	}
	// d1 stops renewing (partitioned); the next delivery takes over once
	// its record stood still
	d2 := &delivery{q: q, msg: stubMsg{}, runKey: "k", sequence: 1, number: 2, worker: "wB"}
	if out, prev, err := d2.claim(ctx); err != nil || out != claimed || prev.Worker != "wA" {
		t.Fatalf("takeover = %v, %+v, %v", out, prev, err)
	}
	if err := d1.renew(ctx, 0); !errors.Is(err, ErrNotOwner) {
		t.Errorf("late renewal: %v, want ErrNotOwner", err)
	}
	if err := d1.publish(ctx, Result{RunKey: "k", Worker: "wA", Delivery: 1}); !errors.Is(err, ErrNotOwner) {
		t.Errorf("late result: %v, want ErrNotOwner", err)
	}
	if _, err := q.results.Get(ctx, "k"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("a refused result was written: %v", err)
	}
	if err := d2.publish(ctx, Result{RunKey: "k", Worker: "wB", Delivery: 2}); err != nil {
		t.Fatalf("owner's result: %v", err)
	}
	if r := await(t, q, "k", 5*time.Second); r.Worker != "wB" {
		t.Errorf("result = %+v", r)
	}
}

func TestLiveOwnerKeepsRun(t *testing.T) {
	_, q := newQueue(t, 2, 3)
	ctx := testCtx(t, 20*time.Second)
	d1 := &delivery{q: q, msg: stubMsg{}, runKey: "k", sequence: 1, number: 1, worker: "wA"}
	if out, _, err := d1.claim(ctx); err != nil || out != claimed {
		t.Fatalf("first claim = %v, %v", out, err)
	}
	renewing, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for renewing.Err() == nil {
			_ = d1.renew(renewing, 0)
			time.Sleep(testLease / 3)
		}
	}()
	d2 := &delivery{q: q, msg: stubMsg{}, runKey: "k", sequence: 1, number: 2, worker: "wB"}
	if out, _, err := d2.claim(ctx); err != nil || out != ownerAlive {
		t.Fatalf("claim over a live owner = %v, %v; want ownerAlive", out, err)
	}
	run, err := q.Live(ctx, "k")
	if err != nil || !run.Live || run.Worker != "wA" {
		t.Errorf("Live = %+v, %v", run, err)
	}
}

func TestEngineRestartLosesNothing(t *testing.T) {
	store := t.TempDir()
	e := enginetest.StartStore(t, store)
	_, js := connect(t, e.URL())
	q, err := CreateQueue(testCtx(t, 10*time.Second), js, "team", 2, testLease, 3)
	if err != nil {
		t.Fatal(err)
	}
	submit(t, q, "done")
	stop := serve(t, q, "w1", 1, echo)
	await(t, q, "done", 10*time.Second)
	stop()
	submit(t, q, "queued")
	e.Shutdown()

	e2 := enginetest.StartStore(t, store)
	_, q2 := openQueue(t, e2.URL())
	if r := await(t, q2, "done", 5*time.Second); r.Worker != "w1" {
		t.Errorf("result after restart = %+v", r)
	}
	if q2.Lease() != testLease || q2.MaxDeliver() != 3 {
		t.Errorf("lease %s, max deliver %d after restart", q2.Lease(), q2.MaxDeliver())
	}
	serve(t, q2, "w2", 1, echo)
	if r := await(t, q2, "queued", 10*time.Second); r.Worker != "w2" {
		t.Errorf("queued job after restart = %+v", r)
	}
}
