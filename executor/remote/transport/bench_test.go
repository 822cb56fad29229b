package transport

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// BenchmarkLotRoundTrip measures a 1-commit lot's trip on a repository of
// this project's size (a clone of the repository the test runs in): the
// lot bundle, the worker's checkout (the base bundle cached), a 1-commit
// result bundle and its Accept into the lead's worktree, per lot; and,
// reported once, the base bundle's making. `go test
// ./executor/remote/transport -run '^$' -bench LotRoundTrip -benchtime 10x`.
func BenchmarkLotRoundTrip(b *testing.B) {
	b.Run("base fetched", func(b *testing.B) { lotRoundTrip(b, "") })
	b.Run("base cached", func(b *testing.B) { lotRoundTrip(b, filepath.Join(b.TempDir(), "bases")) })
}

// lotRoundTrip is BenchmarkLotRoundTrip with the worker's BaseCache at
// cache ("": none).
func lotRoundTrip(b *testing.B, cache string) {
	src, err := gittest.Try(".", "rev-parse", "--show-toplevel")
	if err != nil {
		b.Skipf("not in a git repository: %v", err)
	}
	repo := filepath.Join(b.TempDir(), "lead")
	gittest.Git(b, filepath.Dir(repo), "clone", "-q", "--no-hardlinks", src, repo)
	base := gittest.Git(b, repo, "rev-parse", "HEAD")
	tr := newTransport(b)
	ctx := testCtx(b)
	start := time.Now()
	baseBundle, err := tr.BaseBundle(ctx, repo, base, filepath.Join(b.TempDir(), "cache"))
	if err != nil {
		b.Fatal(err)
	}
	baseMS, baseBytes := time.Since(start).Milliseconds(), size(b, baseBundle)
	tr.BaseCache = cache
	var lotBytes, resBytes int64
	var phases [4]time.Duration // LotBundle, Checkout, ResultBundle, Accept
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		branch := fmt.Sprintf("cadence/bench/lot%d", i)
		wt := filepath.Join(b.TempDir(), "wt")
		gittest.Git(b, repo, "worktree", "add", "-q", "-b", branch, wt, base)
		sent := gittest.Commit(b, wt, "lot", map[string]string{"README.md": fmt.Sprintf("lot %d\n", i)})
		dir := filepath.Join(b.TempDir(), "work")
		lot := filepath.Join(b.TempDir(), "lot.bundle")
		res := filepath.Join(b.TempDir(), "result.bundle")
		b.StartTimer()
		t0 := time.Now()
		if err := tr.LotBundle(ctx, repo, branch, base, lot); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		head, err := tr.Checkout(ctx, dir, baseBundle, lot, branch)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		b.StopTimer()
		gittest.Commit(b, dir, "remote", map[string]string{"docs/remote.md": fmt.Sprintf("remote %d\n", i)})
		b.StartTimer()
		t3 := time.Now()
		if err := tr.ResultBundle(ctx, dir, branch, head, res, 1<<20); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		if _, err := tr.Accept(ctx, repo, wt, res, branch, sent, 1<<20); err != nil {
			b.Fatal(err)
		}
		t5 := time.Now()
		b.StopTimer()
		phases[0] += t1.Sub(t0)
		phases[1] += t2.Sub(t1)
		phases[2] += t4.Sub(t3)
		phases[3] += t5.Sub(t4)
		lotBytes += size(b, lot)
		resBytes += size(b, res)
		b.StartTimer()
	}
	b.ReportMetric(float64(baseMS), "base-ms")
	b.ReportMetric(float64(baseBytes), "base-bytes")
	b.ReportMetric(float64(lotBytes)/float64(b.N), "lot-bytes")
	b.ReportMetric(float64(resBytes)/float64(b.N), "result-bytes")
	for i, name := range []string{"lot-ms", "checkout-ms", "result-ms", "accept-ms"} {
		b.ReportMetric(float64(phases[i].Microseconds())/1000/float64(b.N), name)
	}
}
