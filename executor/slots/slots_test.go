package slots

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestCapWithinProcess(t *testing.T) {
	dir := t.TempDir()
	// Two pools in one process exclude each other like two processes.
	const size = 3
	var global atomic.Int32
	var maxGlobal atomic.Int32
	var wg sync.WaitGroup
	for range 2 {
		p, err := Open(dir, size)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var local, maxLocal atomic.Int32
		for range 8 {
			wg.Go(func() {
				for range 40 {
					s, err := p.Acquire(context.Background(), Holder{Wave: "w"})
					if err != nil {
						t.Error(err)
						return
					}
					if s.Index() < 0 || s.Index() >= size {
						t.Errorf("index %d", s.Index())
					}
					storeMax(&maxLocal, local.Add(1))
					storeMax(&maxGlobal, global.Add(1))
					time.Sleep(50 * time.Microsecond)
					global.Add(-1)
					local.Add(-1)
					if err := s.Release(); err != nil {
						t.Error(err)
					}
				}
			})
		}
		defer func() {
			if maxLocal.Load() > size {
				t.Errorf("a pool held %d slots at once", maxLocal.Load())
			}
		}()
	}
	wg.Wait()
	if m := maxGlobal.Load(); m > size || m < 2 {
		t.Fatalf("max slots held at once = %d, want <= %d (and some concurrency)", m, size)
	}
}

func storeMax(m *atomic.Int32, v int32) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}

type interval struct {
	start, end int64
	index      int
}

// churn runs one churning helper per cap, all on dir, and returns each
// helper's recorded sessions.
func churn(t *testing.T, dir string, caps []int, goroutines, rounds int) [][]interval {
	var kids []*child
	var outs []string
	for i, c := range caps {
		out := filepath.Join(t.TempDir(), fmt.Sprintf("churn-%d", i))
		outs = append(outs, out)
		kids = append(kids, startHelper(t, "churn", dir, strconv.Itoa(c), strconv.Itoa(goroutines), strconv.Itoa(rounds), out))
	}
	var all [][]interval
	for i, k := range kids {
		if err := k.cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
		data, err := os.ReadFile(outs[i])
		if err != nil {
			t.Fatal(err)
		}
		var ivs []interval
		for line := range strings.Lines(string(data)) {
			var iv interval
			if _, err := fmt.Sscan(line, &iv.start, &iv.end, &iv.index); err != nil {
				t.Fatalf("%s: %q: %v", outs[i], line, err)
			}
			ivs = append(ivs, iv)
		}
		if len(ivs) != goroutines*rounds {
			t.Fatalf("helper %d recorded %d sessions, want %d", i, len(ivs), goroutines*rounds)
		}
		all = append(all, ivs)
	}
	return all
}

// maxOverlap returns the largest number of intervals open at one instant.
// The recorded intervals lie inside the real holds, so this never
// overstates the real overlap.
func maxOverlap(ivs []interval) int {
	type ev struct {
		t     int64
		delta int
	}
	var evs []ev
	for _, iv := range ivs {
		evs = append(evs, ev{iv.start, 1}, ev{iv.end, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.delta - b.delta // ends first
	})
	n, m := 0, 0
	for _, e := range evs {
		n += e.delta
		m = max(m, n)
	}
	return m
}

func TestCapAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	const size = 2
	per := churn(t, dir, []int{size, size, size}, 3, 60)
	all := slices.Concat(per...)
	m := maxOverlap(all)
	t.Logf("%d sessions in 3 processes, at most %d at once", len(all), m)
	if m > size {
		t.Fatalf("%d sessions overlapped, cap %d", m, size)
	}
	if m < size {
		t.Fatalf("sessions never overlapped: the test proves nothing")
	}
}

func TestMixedCaps(t *testing.T) {
	dir := t.TempDir()
	// A process with cap 2 holds both of its slots.
	c := startHelper(t, "hold", dir, "2", "2", "small")
	if got := c.line(t); got != "held 1 0" {
		t.Fatalf("helper: %q", got)
	}
	p3, err := Open(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer p3.Close()
	p2, err := Open(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()

	s, err := p3.Acquire(context.Background(), Holder{Wave: "big"})
	if err != nil || s.Index() != 2 {
		t.Fatalf("cap-3 pool: %v, %v", s, err)
	}
	expectTimeout(t, p3, "cap-3 pool with 3 slots taken machine-wide")
	expectTimeout(t, p2, "cap-2 pool with slot-0 and slot-1 taken")
	s.Release()
	expectTimeout(t, p2, "cap-2 pool with only slot-2 free")
	if s, err = p3.Acquire(context.Background(), Holder{}); err != nil || s.Index() != 2 {
		t.Fatalf("cap-3 pool: %v, %v", s, err)
	}
	s.Release()
	c.stdin.Close() // the helper releases its slots
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s, err = p2.Acquire(ctx, Holder{}); err != nil || s.Index() > 1 {
		t.Fatalf("cap-2 pool after release: %v, %v", s, err)
	}
	s.Release()

	// Under load: caps 2, 3 and 3 on one directory.
	per := churn(t, dir, []int{2, 3, 3}, 3, 40)
	if m := maxOverlap(slices.Concat(per...)); m > 3 {
		t.Fatalf("%d sessions at once, largest cap 3", m)
	}
	if m := maxOverlap(per[0]); m > 2 {
		t.Fatalf("cap-2 process held %d slots at once", m)
	}
	for _, iv := range per[0] {
		if iv.index > 1 {
			t.Fatalf("cap-2 process used slot-%d", iv.index)
		}
	}
}

func expectTimeout(t *testing.T, p *Pool, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if s, err := p.Acquire(ctx, Holder{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s: Acquire = %v, %v; want deadline exceeded", what, s, err)
	}
}

func TestKilledHolderFreesSlot(t *testing.T) {
	dir := t.TempDir()
	c := startHelper(t, "hold", dir, "1", "1", "victim")
	if got := c.line(t); got != "held 0" {
		t.Fatalf("helper: %q", got)
	}
	infos, err := Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || !infos[0].Held || infos[0].Holder == nil ||
		infos[0].Holder.PID != c.pid() || infos[0].Holder.Wave != "victim" {
		t.Fatalf("Inspect = %+v", infos)
	}

	p, err := Open(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	type res struct {
		s  *Slot
		at time.Time
		e  error
	}
	got := make(chan res, 1)
	go func() {
		s, err := p.Acquire(context.Background(), Holder{Wave: "heir"})
		got <- res{s, time.Now(), err}
	}()
	select {
	case r := <-got:
		t.Fatalf("Acquire returned while held: %v", r.e)
	case <-time.After(50 * time.Millisecond):
	}
	killed := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.e != nil {
			t.Fatal(r.e)
		}
		t.Logf("slot of the killed process taken %v after SIGKILL", r.at.Sub(killed))
		if d := r.at.Sub(killed); d > time.Second {
			t.Errorf("took %v", d)
		}
		r.s.Release()
	case <-time.After(5 * time.Second):
		t.Fatal("slot of a killed process not freed")
	}
}

func TestAcquireCancel(t *testing.T) {
	dir := t.TempDir()
	base := runtime.NumGoroutine()
	other, err := Open(dir, 1) // stands for another process
	if err != nil {
		t.Fatal(err)
	}
	held, err := other.Acquire(context.Background(), Holder{Wave: "other"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Open(dir, 1)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var late atomic.Int64
	for range 5 {
		wg.Go(func() {
			s, err := p.Acquire(ctx, Holder{})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Acquire = %v, %v; want canceled", s, err)
			}
			late.Store(time.Now().UnixNano())
		})
	}
	time.Sleep(30 * time.Millisecond)
	cancelled := time.Now()
	cancel()
	wg.Wait()
	// Waking on cancel is asserted by wg.Wait returning at all; how fast
	// depends on the machine's load (logged, never asserted).
	t.Logf("Acquire returned %v after cancel", time.Unix(0, late.Load()).Sub(cancelled))

	// Close fails remaining waiters, and later Acquires.
	errc := make(chan error, 1)
	go func() { _, err := p.Acquire(context.Background(), Holder{}); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("waiter at Close: %v", err)
	}
	if _, err := p.Acquire(context.Background(), Holder{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}

	// The grabber still blocked in flock gets the slot when it is
	// freed, gives it back and exits: no slot and no goroutine leak.
	held.Release()
	other.Close()
	p.grabbing.Wait()
	other.grabbing.Wait()
	waitGoroutines(t, base)
	infos, err := Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Held {
			t.Fatalf("slot-%d still held: %+v", in.Index, in.Holder)
		}
	}
}

func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	if infos, err := Inspect(filepath.Join(dir, "missing")); err != nil || infos != nil {
		t.Fatalf("missing dir: %v, %v", infos, err)
	}
	p, err := Open(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	since := time.Now().Add(-time.Minute).Truncate(time.Second)
	a, err := p.Acquire(context.Background(), Holder{Wave: "auth", Lot: "api", Step: "review", Since: since})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Acquire(context.Background(), Holder{Wave: "auth", Lot: "ui"})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "slot-x"), nil, 0o644) // not a slot
	infos, err := Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 3 {
		t.Fatalf("Inspect = %+v", infos)
	}
	for i, in := range infos {
		if in.Index != i {
			t.Fatalf("Inspect = %+v", infos)
		}
		switch i {
		case a.Index():
			h := in.Holder
			if !in.Held || h == nil || h.PID != os.Getpid() || h.Wave != "auth" || h.Lot != "api" || h.Step != "review" || !h.Since.Equal(since) {
				t.Fatalf("slot-%d: %+v %+v", i, in, h)
			}
		case b.Index():
			if !in.Held || in.Holder == nil || in.Holder.Lot != "ui" || in.Holder.Since.IsZero() {
				t.Fatalf("slot-%d: %+v", i, in)
			}
		default:
			if in.Held || in.Holder != nil {
				t.Fatalf("slot-%d: %+v", i, in)
			}
		}
	}
	a.Release()
	if err := a.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	b.Release()
	infos, _ = Inspect(dir)
	for _, in := range infos {
		if in.Held || in.Holder != nil {
			t.Fatalf("after release: %+v", in)
		}
	}
}

func TestOpenRejectsBadSize(t *testing.T) {
	if _, err := Open(t.TempDir(), 0); err == nil {
		t.Fatal("Open with size 0 succeeded")
	}
}

// TestAcquireDoneContext: a context already done takes no slot, even with
// every slot free, and leaves them all to the next caller.
func TestAcquireDoneContext(t *testing.T) {
	p, err := Open(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s, err := p.Acquire(ctx, Holder{Wave: "w"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire on a done context = %v, %v; want context.Canceled", s, err)
	}
	s, err := p.Acquire(context.Background(), Holder{Wave: "w"})
	if err != nil {
		t.Fatalf("Acquire after the refusal: %v", err)
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
}
