package queue

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine"
	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testLease is the lease of the tests' queues: short, so redelivery and
// fencing happen within seconds.
const testLease = time.Second

// connect opens a JetStream client on url, closed when the test ends.
func connect(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return nc, js
}

// newQueue starts an engine and creates queue "team" on it.
func newQueue(t testing.TB, poolCap, maxDeliver int) (*engine.Engine, *Queue) {
	t.Helper()
	e := enginetest.Start(t)
	_, js := connect(t, e.URL())
	q, err := CreateQueue(testCtx(t, 10*time.Second), js, "team", poolCap, testLease, maxDeliver)
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	return e, q
}

// openQueue opens queue "team" on a connection of its own.
func openQueue(t testing.TB, url string) (*nats.Conn, *Queue) {
	t.Helper()
	nc, js := connect(t, url)
	q, err := Open(testCtx(t, 10*time.Second), js, "team")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return nc, q
}

// testCtx is a context that ends after d or with the test.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// serve runs a worker until the returned stop is called (and the test
// ends); stop waits for Serve to return.
func serve(t testing.TB, q *Queue, id string, slots int, h Handler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := q.Serve(ctx, WorkerOptions{ID: id, Slots: slots, Handler: h}); err != nil {
			t.Logf("worker %s: %v", id, err)
		}
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("worker %s did not stop", id)
		}
	}
	t.Cleanup(stop)
	return stop
}

// echo is a handler that answers {"lot": job.Lot}.
func echo(_ context.Context, job Job, _ *Progress) (Result, error) {
	data, _ := json.Marshal(map[string]string{"lot": job.Lot})
	return Result{Result: data}, nil
}

func submit(t testing.TB, q *Queue, key string) {
	t.Helper()
	if err := q.Submit(testCtx(t, 10*time.Second), Job{RunKey: key, Wave: "w", WaveID: "w1", Lot: key, Step: "command"}); err != nil {
		t.Fatalf("Submit %s: %v", key, err)
	}
}

func await(t testing.TB, q *Queue, key string, within time.Duration) Result {
	t.Helper()
	r, err := q.Await(testCtx(t, within), key)
	if err != nil {
		t.Fatalf("Await %s: %v", key, err)
	}
	return r
}
