package slots

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// age sets the holds file of dir's modification time back by d.
func age(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	if err := os.Chtimes(filepath.Join(dir, HoldsFile), old, old); err != nil {
		t.Fatal(err)
	}
}

// TestHoldsCache: an old holds file is read once and then served from
// the cache (its expiry computed at each call); a hold taken, renewed or
// released by anyone replaces the file and is seen at the next call; a
// file younger than racyWindow is read every time, never cached; a
// missing file is no holds.
func TestHoldsCache(t *testing.T) {
	dir := t.TempDir()
	var c holdsCache
	if n, err := c.live(dir, t0); n != 0 || err != nil {
		t.Fatalf("no holds file: %d, %v", n, err)
	}
	if _, _, err := TakeHold(dir, "lead", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.live(dir, t0); n != 1 || c.ok {
		t.Fatalf("young file: %d holds, cached %v; want 1, not cached", n, c.ok)
	}
	age(t, dir, time.Minute)
	if n, _ := c.live(dir, t0); n != 1 || !c.ok {
		t.Fatalf("old file: %d holds, cached %v; want 1, cached", n, c.ok)
	}
	// Served from the cache while it is the same file (TestHoldsCacheServes).
	key := c.key
	if n, err := c.live(dir, t0.Add(30*time.Minute)); n != 1 || err != nil || c.key != key {
		t.Fatalf("cached: %d, %v", n, err)
	}
	if n, _ := c.live(dir, t0.Add(time.Hour)); n != 0 {
		t.Fatalf("expired in the cache: %d holds, want 0", n)
	}
	// Another hold (any process: the file is replaced) counts at once.
	if _, _, err := TakeHold(dir, "review", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.live(dir, t0); n != 2 {
		t.Fatalf("after a new hold: %d, want 2", n)
	}
	age(t, dir, time.Minute)
	if n, _ := c.live(dir, t0); n != 2 || !c.ok {
		t.Fatalf("old again: %d, cached %v", n, c.ok)
	}
	if err := ReleaseHold(dir, "lead", t0); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.live(dir, t0); n != 1 {
		t.Fatalf("after a release: %d, want 1", n)
	}
	if err := os.Remove(filepath.Join(dir, HoldsFile)); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.live(dir, t0); n != 0 {
		t.Fatalf("file removed: %d, want 0", n)
	}
}

// TestHoldsCacheServes: a cached read is not done again: the cached holds
// answer even when the file cannot be parsed any more, as long as it is
// the same file (the identity is what is checked, not the content).
func TestHoldsCacheServes(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := TakeHold(dir, "lead", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	age(t, dir, time.Minute)
	var c holdsCache
	if n, _ := c.live(dir, t0); n != 1 || !c.ok {
		t.Fatalf("first read: %d, cached %v", n, c.ok)
	}
	c.holds = append(c.holds, Hold{Label: "only-in-the-cache", Since: t0, Expires: t0.Add(time.Hour)})
	if n, _ := c.live(dir, t0); n != 2 {
		t.Fatalf("not served from the cache: %d holds, want 2", n)
	}
}
