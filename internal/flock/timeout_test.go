package flock

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAcquireTimeoutWaitsForRelease: a held lock is waited for; onHeld
// names the holder once, before the wait; the holder's release (an
// event, not a clock) lets the waiter in well within its generous timeout.
func TestAcquireTimeoutWaitsForRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wave.state.json.lock")
	c := startHolder(t, path, "auth")

	held := make(chan *HeldError, 2)
	got := make(chan error, 1)
	var l *Lock
	go func() {
		var err error
		l, err = AcquireTimeout(context.Background(), path, Holder{Wave: "b"}, 10*time.Minute, func(he *HeldError) { held <- he })
		got <- err
	}()
	select {
	case he := <-held:
		if he.Holder.Wave != "auth" || he.Holder.PID != c.cmd.Process.Pid {
			t.Fatalf("onHeld got %+v", he.Holder)
		}
	case err := <-got:
		t.Fatalf("AcquireTimeout returned before waiting: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("onHeld never called")
	}
	c.stdin.Close() // the holder releases
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("AcquireTimeout did not return after the release")
	}
	defer l.Release()
	if len(held) != 0 {
		t.Fatal("onHeld called more than once")
	}
}

// TestAcquireTimeoutExpires: the holder never releases; after the timeout
// the error is a *HeldError naming it, with Waited set.
func TestAcquireTimeoutExpires(t *testing.T) {
	path := filepath.Join(t.TempDir(), "repo.lock")
	held, err := TryAcquire(path, Holder{Wave: "a", What: "repo app"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	calls := 0
	_, err = AcquireTimeout(context.Background(), path, Holder{Wave: "b"}, 30*time.Millisecond, func(*HeldError) { calls++ })
	var he *HeldError
	if !errors.As(err, &he) || he.Holder.Wave != "a" || he.Waited != 30*time.Millisecond {
		t.Fatalf("got %v (%+v)", err, he)
	}
	if !strings.HasSuffix(err.Error(), "(repo app); still held after waiting 30ms") {
		t.Errorf("message: %s", err)
	}
	if calls != 1 {
		t.Errorf("onHeld called %d times, want 1", calls)
	}
}

// TestAcquireTimeoutZeroRefusesAtOnce: no timeout is TryAcquire, and
// onHeld is not called; a free lock is taken either way.
func TestAcquireTimeoutZeroRefusesAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := AcquireTimeout(context.Background(), path, Holder{Wave: "a"}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = AcquireTimeout(context.Background(), path, Holder{Wave: "b"}, 0, func(*HeldError) { t.Error("onHeld called") })
	var he *HeldError
	if !errors.As(err, &he) || he.Waited != 0 || strings.Contains(err.Error(), "waiting") {
		t.Fatalf("got %v", err)
	}

	// A cancelled caller gets its context's error, not a HeldError.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := AcquireTimeout(ctx, path, Holder{Wave: "c"}, time.Minute, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
