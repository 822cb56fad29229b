package queue

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
)

// TestForgedResultNeitherTakenNorFinishing: a client of the queue that may
// write results (any worker's credentials) writes a result for a run key
// no delivery claimed. The coordinator's Await does not return it, and
// the worker that is then delivered the job does not take it as the run's
// result (which would acknowledge the job unrun): it runs the job, and
// its result, the owner's, is the one Await returns.
func TestForgedResultNeitherTakenNorFinishing(t *testing.T) {
	_, q := newQueue(t, 2, 3)
	key := "w.id.a.implement.0.abc"
	forged, _ := json.Marshal(Result{RunKey: key, Sequence: 1, Delivery: 1, Worker: "evil", Result: json.RawMessage(`{"forged":true}`)})
	if _, err := q.results.Put(testCtx(t, 10*time.Second), key, forged); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 2*testLease)
	_, err := q.Await(c, key)
	cancel()
	if err == nil {
		t.Fatal("Await returned a result no delivery owned")
	}
	submit(t, q, key)
	var runs atomic.Int64
	serve(t, q, "w1", 1, func(ctx context.Context, job Job, p *Progress) (Result, error) {
		runs.Add(1)
		return echo(ctx, job, p)
	})
	r := await(t, q, key, 15*time.Second)
	if r.Worker != "w1" || string(r.Result) != `{"lot":"`+key+`"}` || runs.Load() != 1 {
		t.Errorf("result %+v after %d runs; want worker w1's, one run", r, runs.Load())
	}
}
