package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSubmitAwait(t *testing.T) {
	_, q := newQueue(t, 2, 3)
	serve(t, q, "w1", 2, echo)
	submit(t, q, "wave.lot-a.implement.1")
	r := await(t, q, "wave.lot-a.implement.1", 10*time.Second)
	if string(r.Result) != `{"lot":"wave.lot-a.implement.1"}` || r.Worker != "w1" || r.Delivery != 1 || r.Error != "" {
		t.Errorf("result = %+v", r)
	}
	// a result written before Await is returned at once (re-attach)
	r2 := await(t, q, "wave.lot-a.implement.1", 5*time.Second)
	if r2.Sequence != r.Sequence {
		t.Errorf("second Await = %+v", r2)
	}
}

func TestSubmitTwiceRunsOnce(t *testing.T) {
	_, q := newQueue(t, 2, 3)
	var runs atomic.Int64
	for range 2 {
		submit(t, q, "k")
	}
	serve(t, q, "w1", 2, func(ctx context.Context, job Job, p *Progress) (Result, error) {
		runs.Add(1)
		return echo(ctx, job, p)
	})
	await(t, q, "k", 10*time.Second)
	// the stream holds nothing more: a second run would need a message
	waitFor(t, 10*time.Second, func() bool {
		p, err := q.Pool(context.Background())
		return err == nil && p.InFlight == 0 && p.Queued == 0
	})
	if n := runs.Load(); n != 1 {
		t.Errorf("the job ran %d times, want 1", n)
	}
}

func TestPoolCapAcrossWorkers(t *testing.T) {
	e, q := newQueue(t, 2, 3)
	var running, highest atomic.Int64
	h := func(ctx context.Context, job Job, p *Progress) (Result, error) {
		n := running.Add(1)
		for {
			m := highest.Load()
			if n <= m || highest.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		running.Add(-1)
		return echo(ctx, job, p)
	}
	_, q2 := openQueue(t, e.URL())
	serve(t, q, "w1", 4, h)
	serve(t, q2, "w2", 4, h)
	const jobs = 12
	for i := range jobs {
		submit(t, q, fmt.Sprintf("job%d", i))
	}
	for i := range jobs {
		await(t, q, fmt.Sprintf("job%d", i), 30*time.Second)
	}
	if m := highest.Load(); m > 2 || m < 1 {
		t.Errorf("at most %d jobs ran at once, want 1..2 (the cap)", m)
	}
}

func TestCancelReachesHandler(t *testing.T) {
	_, q := newQueue(t, 2, 3)
	started := make(chan struct{})
	serve(t, q, "w1", 1, func(ctx context.Context, job Job, p *Progress) (Result, error) {
		close(started)
		<-ctx.Done()
		var c *CanceledError
		if !errors.As(context.Cause(ctx), &c) {
			return Result{}, fmt.Errorf("cause %v", context.Cause(ctx))
		}
		return Result{Result: []byte(`"` + c.Reason + `"`)}, nil
	})
	submit(t, q, "k")
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not start")
	}
	if err := q.Cancel(context.Background(), "k", "dropped by the lead"); err != nil {
		t.Fatal(err)
	}
	r := await(t, q, "k", testLease)
	if string(r.Result) != `"dropped by the lead"` {
		t.Errorf("result = %+v", r)
	}
}

func TestHandlerPanicIsAResult(t *testing.T) {
	_, q := newQueue(t, 2, 3)
	serve(t, q, "w1", 1, func(context.Context, Job, *Progress) (Result, error) { panic("boom") })
	submit(t, q, "k")
	r := await(t, q, "k", 10*time.Second)
	if !strings.Contains(r.Error, "handler panicked: boom") {
		t.Errorf("result = %+v", r)
	}
}

// waitFor polls cond until it holds, failing the test after within.
func waitFor(t testing.TB, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
