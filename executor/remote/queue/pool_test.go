package queue

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWorkersPoolAndLive(t *testing.T) {
	_, q := newQueue(t, 3, 3)
	started := make(chan context.Context, 1)
	serve(t, q, "w1", 2, func(ctx context.Context, job Job, p *Progress) (Result, error) {
		p.Tokens(42)
		return blocking(started)(ctx, job, p)
	})
	submit(t, q, "k")
	receive(t, started, 10*time.Second)
	ctx := testCtx(t, 10*time.Second)
	waitFor(t, 5*time.Second, func() bool {
		hbs, err := q.Workers(ctx)
		return err == nil && len(hbs) == 1 && hbs[0].ID == "w1" && hbs[0].Slots == 2 && hbs[0].Free == 1
	})
	p, err := q.Pool(ctx)
	if err != nil || p.Cap != 3 || p.InFlight != 1 || p.Free != 2 {
		t.Errorf("Pool = %+v, %v", p, err)
	}
	waitFor(t, 5*time.Second, func() bool {
		r, err := q.Live(ctx, "k")
		return err == nil && r.Live && r.Worker == "w1" && r.Tokens == 42
	})
	if _, err := q.Live(ctx, "other"); !errors.Is(err, ErrNoRun) {
		t.Errorf("Live of an unclaimed key: %v", err)
	}
}

// TestStoppedWorkerNotLive: a worker that stops deletes its heartbeat:
// Workers no longer lists it (a dead one's lasts until the bucket's TTL).
func TestStoppedWorkerNotLive(t *testing.T) {
	_, q := newQueue(t, 1, 1)
	stop := serve(t, q, "w1", 1, func(ctx context.Context, job Job, p *Progress) (Result, error) { return Result{}, nil })
	ctx := testCtx(t, 10*time.Second)
	waitFor(t, 5*time.Second, func() bool {
		hbs, err := q.Workers(ctx)
		return err == nil && len(hbs) == 1
	})
	stop()
	if hbs, err := q.Workers(ctx); err != nil || len(hbs) != 0 {
		t.Errorf("after the worker stopped: Workers = %+v, %v", hbs, err)
	}
}

func TestBundlesBounded(t *testing.T) {
	_, q := newQueue(t, 1, 1)
	ctx := testCtx(t, 10*time.Second)
	data := bytes.Repeat([]byte("x"), 1000)
	if err := q.PutBundle(ctx, "big", bytes.NewReader(data), 999); !errors.Is(err, ErrTooBig) {
		t.Errorf("put over the bound: %v", err)
	}
	if err := q.PutBundle(ctx, "ok", bytes.NewReader(data), 1000); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := q.GetBundle(ctx, "ok", &out, 999); !errors.Is(err, ErrTooBig) || out.Len() != 0 {
		t.Errorf("get over the bound: %v (%d bytes read)", err, out.Len())
	}
	if err := q.GetBundle(ctx, "ok", &out, 1000); err != nil || out.Len() != 1000 {
		t.Errorf("get: %v, %d bytes", err, out.Len())
	}
	if err := q.GetBundle(ctx, "big", &out, 1000); err == nil || !strings.Contains(err.Error(), "big") {
		t.Errorf("a refused put stored something: %v", err)
	}
}
