package slots

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchHolds makes a slot directory with three holds (two live, one
// expired), written a minute ago (the holds file of a long wave is older
// than the cache's racyWindow), and returns it.
func benchHolds(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	now := time.Now()
	for _, h := range []struct {
		label string
		ttl   time.Duration
	}{{"lead", time.Hour}, {"review", time.Hour}, {"old", time.Nanosecond}} {
		if _, _, err := TakeHold(dir, h.label, h.ttl, now); err != nil {
			b.Fatal(err)
		}
	}
	old := now.Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(dir, HoldsFile), old, old); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkLiveHolds is the read of the holds file that every slot
// request made before the cache: lock file, shared flock(2), read, JSON.
func BenchmarkLiveHolds(b *testing.B) {
	dir := benchHolds(b)
	b.ResetTimer()
	for b.Loop() {
		if n, err := LiveHolds(dir, time.Now()); err != nil || n != 2 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkRefresh is what a slot request reads of the holds now
// (Pool.refresh: the pool's cache, checked by the file's identity).
func BenchmarkRefresh(b *testing.B) {
	dir := benchHolds(b)
	p, err := Open(dir, 4)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.ResetTimer()
	for b.Loop() {
		p.refresh()
	}
}

// BenchmarkAcquireRelease is one slot request and its release, holds
// read included, on a pool of 4 with 2 live holds.
func BenchmarkAcquireRelease(b *testing.B) {
	dir := benchHolds(b)
	p, err := Open(dir, 4)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		s, err := p.Acquire(ctx, Holder{Wave: "w", Lot: "l"})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Release(); err != nil {
			b.Fatal(err)
		}
	}
}
