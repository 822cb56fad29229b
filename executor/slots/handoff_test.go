package slots

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// measureHandoff measures n cross-process handoffs of the only slot of a
// size-1 pool: a helper process (A) holds it while this process (B) blocks
// in Acquire; A records when it releases, B when Acquire returns.
func measureHandoff(tb testing.TB, n int) []time.Duration {
	dir := tb.TempDir()
	a := startHelper(tb, "handoff", dir)
	p, err := Open(dir, 1)
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	lat := make([]time.Duration, 0, n)
	for range n {
		a.send(tb, "go")
		if got := a.line(tb); got != "held" {
			tb.Fatalf("helper: %q", got)
		}
		a.send(tb, "wait") // A releases 3ms from now; we block meanwhile
		s, err := p.Acquire(context.Background(), Holder{Wave: "B"})
		got := time.Now()
		if err != nil {
			tb.Fatal(err)
		}
		f := strings.Fields(a.line(tb))
		if len(f) != 2 || f[0] != "released" {
			tb.Fatalf("helper: %v", f)
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		lat = append(lat, got.Sub(time.Unix(0, ns)))
		if err := s.Release(); err != nil {
			tb.Fatal(err)
		}
	}
	slices.Sort(lat)
	return lat
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func TestHandoffLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement; skipped with -short")
	}
	lat := measureHandoff(t, 200)
	p50, p99 := percentile(lat, 0.50), percentile(lat, 0.99)
	t.Logf("cross-process handoff over %d rounds: min %.3fms p50 %.3fms p99 %.3fms max %.3fms",
		len(lat), ms(lat[0]), ms(p50), ms(p99), ms(lat[len(lat)-1]))
	// The figures are logged, not asserted: a test may not depend on
	// timing it does not control (a loaded CI machine took p99 38 ms).
	// BenchmarkHandoff measures them; the target is p50 < 5 ms, p99 < 20 ms
	// on a quiet machine.
}

// BenchmarkHandoff reports the cross-process handoff latency; use at least
// 200 rounds, e.g. -bench Handoff -benchtime 300x.
func BenchmarkHandoff(b *testing.B) {
	lat := measureHandoff(b, b.N)
	b.ReportMetric(ms(percentile(lat, 0.50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
}
