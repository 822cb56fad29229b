package slots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable clock for holds' expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestHoldRenewRelease(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "slots")
	h, renewed, err := TakeHold(dir, "me", 2*time.Hour, t0)
	if err != nil || renewed || !h.Since.Equal(t0) || !h.Expires.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("TakeHold = %+v, %v, %v", h, renewed, err)
	}
	if _, _, err := TakeHold(dir, "other", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	// Renewal: same label, later: Since kept, Expires moved, still one hold.
	h, renewed, err = TakeHold(dir, "me", 3*time.Hour, t0.Add(time.Hour))
	if err != nil || !renewed || !h.Since.Equal(t0) || !h.Expires.Equal(t0.Add(4*time.Hour)) {
		t.Fatalf("renewal = %+v, %v, %v", h, renewed, err)
	}
	hs, err := Holds(dir, t0.Add(time.Hour))
	if err != nil || len(hs) != 2 || hs[0].Label != "me" || hs[1].Label != "other" {
		t.Fatalf("Holds = %+v, %v", hs, err)
	}
	if n, err := LiveHolds(dir, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("LiveHolds after other expired = %d, %v; want 1", n, err)
	}
	if err := ReleaseHold(dir, "me", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, _ := LiveHolds(dir, t0.Add(time.Hour)); n != 0 {
		t.Fatalf("LiveHolds after release = %d", n)
	}
	if err := ReleaseHold(dir, "me", t0); !errors.Is(err, ErrNoHold) {
		t.Fatalf("second release = %v; want ErrNoHold", err)
	}
	// An expired hold can still be released.
	if err := ReleaseHold(dir, "other", t0.Add(2*time.Hour)); err != nil {
		t.Fatalf("release of an expired hold: %v", err)
	}
}

func TestHoldLabels(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"", "-x", "a b", "a/b", "../x", "é", strings.Repeat("a", 65), "a\n"} {
		if _, _, err := TakeHold(dir, bad, time.Hour, t0); err == nil {
			t.Errorf("TakeHold(%q) took it", bad)
		}
		if err := ReleaseHold(dir, bad, t0); err == nil || errors.Is(err, ErrNoHold) {
			t.Errorf("ReleaseHold(%q) = %v; want a label error", bad, err)
		}
	}
	for _, good := range []string{"a", "lead-1", "my_session.2", strings.Repeat("a", 64)} {
		if _, _, err := TakeHold(dir, good, time.Hour, t0); err != nil {
			t.Errorf("TakeHold(%q): %v", good, err)
		}
	}
	if _, _, err := TakeHold(dir, "z", 0, t0); err == nil {
		t.Error("ttl 0 taken")
	}
}

func TestHoldExpiry(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := TakeHold(dir, "me", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) []Hold {
		hs, err := Holds(dir, t0.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
	if hs := at(time.Hour - time.Second); len(hs) != 1 || hs[0].Expired(t0.Add(time.Hour-time.Second)) {
		t.Fatalf("before expiry: %+v", hs)
	}
	if n, _ := LiveHolds(dir, t0.Add(time.Hour)); n != 0 {
		t.Fatalf("LiveHolds at expiry = %d", n)
	}
	if hs := at(time.Hour + ExpiredKept); len(hs) != 1 || !hs[0].Expired(t0.Add(time.Hour+ExpiredKept)) {
		t.Fatalf("expired, kept 24 h: %+v", hs)
	}
	if hs := at(time.Hour + ExpiredKept + time.Second); len(hs) != 0 {
		t.Fatalf("expired more than 24 h ago: %+v", hs)
	}
	// A write drops it from the file too.
	if _, _, err := TakeHold(dir, "next", time.Hour, t0.Add(26*time.Hour)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, HoldsFile))
	if strings.Contains(string(data), `"me"`) {
		t.Fatalf("dropped hold still in the file: %s", data)
	}
	// Holding an expired label again starts it anew.
	if _, _, err := TakeHold(dir, "again", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	h, renewed, err := TakeHold(dir, "again", time.Hour, t0.Add(2*time.Hour))
	if err != nil || !renewed || !h.Since.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("hold again after expiry = %+v, %v, %v", h, renewed, err)
	}
}

// TestPoolHolds: a live hold keeps slot-0 and one of the cap from a pool;
// its release and its expiry give them back to waiting Acquires.
func TestPoolHolds(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{t: t0}
	if _, _, err := TakeHold(dir, "lead", time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	p, err := open(dir, 2, clk.now, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s, err := p.Acquire(context.Background(), Holder{Wave: "w"})
	if err != nil || s.Index() != 1 {
		t.Fatalf("Acquire with one hold = %v, %v; want slot-1", s, err)
	}
	expectTimeout(t, p, "cap 2, one hold, one session")
	s.Release()

	// Release frees the slot for a waiting Acquire.
	s1, err := p.Acquire(context.Background(), Holder{})
	if err != nil || s1.Index() != 1 {
		t.Fatalf("Acquire = %v, %v", s1, err)
	}
	got := make(chan *Slot)
	go func() {
		s, err := p.Acquire(context.Background(), Holder{})
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	if err := ReleaseHold(dir, "lead", clk.now()); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s == nil || s.Index() != 0 {
		t.Fatalf("after release: %v", s)
	} else {
		s.Release()
	}
	s1.Release()

	// Two holds on a pool of 2: nothing starts until one expires.
	for _, l := range []string{"a", "b"} {
		if _, _, err := TakeHold(dir, l, time.Hour, clk.now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := TakeHold(dir, "b", 2*time.Hour, clk.now()); err != nil {
		t.Fatal(err)
	}
	expectTimeout(t, p, "cap 2, two holds")
	go func() {
		s, err := p.Acquire(context.Background(), Holder{})
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	clk.add(time.Hour) // "a" expires, "b" (renewed) lives on
	if s := <-got; s == nil || s.Index() != 1 {
		t.Fatalf("after expiry of one of two holds: %v; want slot-1", s)
	} else {
		defer s.Release()
	}
	expectTimeout(t, p, "cap 2, one hold left, one session")
}

// TestHoldsAcrossProcesses: three processes with a cap of 3 each, and one
// hold: never more than 2 sessions at once, never in slot-0.
func TestHoldsAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := TakeHold(dir, "lead", time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	const size = 3
	per := churn(t, dir, []int{size, size, size}, 3, 40)
	all := slices.Concat(per...)
	m := maxOverlap(all)
	t.Logf("%d sessions in 3 processes, at most %d at once", len(all), m)
	if m > size-1 {
		t.Fatalf("%d sessions overlapped, cap %d minus 1 hold", m, size)
	}
	if m < size-1 {
		t.Fatalf("sessions never overlapped: the test proves nothing")
	}
	for _, iv := range all {
		if iv.index == 0 {
			t.Fatalf("a session took slot-0, the held one")
		}
	}
}

// TestReleaseForeignLabel: a hold whose label cadence hold would refuse
// (a hand-written holds file) can still be released.
func TestReleaseForeignLabel(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	label := "\x1b[2JEVIL\nfake"
	lj, _ := json.Marshal(label)
	rec := fmt.Sprintf(`{"holds":[{"label":%s,"since":%q,"expires":%q}]}`, lj, now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "holds.json"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := LiveHolds(dir, now); err != nil || n != 1 {
		t.Fatalf("live holds %d %v", n, err)
	}
	if err := ReleaseHold(dir, label, now); err != nil {
		t.Fatal(err)
	}
	if n, _ := LiveHolds(dir, now); n != 0 {
		t.Errorf("%d holds left", n)
	}
}
