package queue

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkDispatch measures the queue's dispatch overhead per job on
// loopback: submit → the handler starts (p50-start-ms), and the handler
// returns → Await returns (p50-end-ms), one job at a time.
func BenchmarkDispatch(b *testing.B) {
	_, q := newQueue(b, 4, 3)
	begun := make(chan time.Time, 1)
	ended := make(chan time.Time, 1)
	serve(b, q, "w1", 1, func(ctx context.Context, job Job, p *Progress) (Result, error) {
		begun <- time.Now()
		defer func() { ended <- time.Now() }()
		return echo(ctx, job, p)
	})
	var starts, ends []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		key := fmt.Sprintf("bench%d", i)
		t0 := time.Now()
		submit(b, q, key)
		t1 := <-begun
		r := await(b, q, key, 10*time.Second)
		t3 := time.Now()
		t2 := <-ended
		_ = r
		starts = append(starts, t1.Sub(t0))
		ends = append(ends, t3.Sub(t2))
	}
	b.ReportMetric(p50(starts), "p50-start-ms")
	b.ReportMetric(p50(ends), "p50-end-ms")
}

func p50(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}
