package control

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
)

// newClient is a client of a wave in a fresh folder, polling fast.
func newClient(t *testing.T) Client {
	t.Helper()
	dir := t.TempDir()
	return Client{
		Lock:     filepath.Join(dir, "wave.state.json.lock"),
		Channel:  Channel{Dir: filepath.Join(dir, "wave.state.json.requests")},
		What:     "drop",
		LockWait: 5 * time.Second,
		Poll:     time.Millisecond,
	}
}

// holdLock takes c's wave lock as h (a second open file description: held
// against the client as another process's would be).
func holdLock(t *testing.T, c Client, h flock.Holder) *flock.Lock {
	t.Helper()
	l, err := flock.TryAcquire(c.Lock, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release() })
	return l
}

// pending waits for the one request of c's channel.
func pending(t *testing.T, c Client) Request {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if reqs, _, err := c.Channel.Pending(); err == nil && len(reqs) == 1 {
			return reqs[0]
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no request was sent")
	return Request{}
}

type sent struct {
	d   Delivery
	err error
}

func sendAsync(c Client, ctx context.Context, req Request, wait time.Duration) <-chan sent {
	out := make(chan sent, 1)
	go func() {
		d, err := c.Send(ctx, req, wait)
		out <- sent{d, err}
	}()
	return out
}

// TestClientNoApply: with no apply live the client takes the wave lock,
// held in the command's name, and sends nothing.
func TestClientNoApply(t *testing.T) {
	c := newClient(t)
	d, err := c.Send(context.Background(), Request{Kind: KindStop}, time.Second)
	if err != nil || d.Lock == nil || d.Live || d.Queued || d.Ended {
		t.Fatalf("Send = %+v, %v; want the lock", d, err)
	}
	defer d.Lock.Release()
	_, err = flock.TryAcquire(c.Lock, flock.Holder{})
	var held *flock.HeldError
	if !errors.As(err, &held) || held.Holder.What != "cadence drop" || held.Holder.PID != os.Getpid() {
		t.Errorf("the wave lock's holder: %v", err)
	}
	if reqs, _, _ := c.Channel.Pending(); len(reqs) != 0 {
		t.Errorf("sent %+v with no apply live", reqs)
	}
}

// TestClientWaitsForCommand: a wave lock held by another command (not an
// apply) is waited for, then taken; nothing is sent.
func TestClientWaitsForCommand(t *testing.T) {
	c := newClient(t)
	other := holdLock(t, c, flock.Holder{What: "cadence clean"})
	got := sendAsync(c, context.Background(), Request{Kind: KindStop}, time.Second)
	time.Sleep(20 * time.Millisecond)
	select {
	case s := <-got:
		t.Fatalf("Send returned while another command held the lock: %+v, %v", s.d, s.err)
	default:
	}
	other.Release()
	s := <-got
	if s.err != nil || s.d.Lock == nil || s.d.Live {
		t.Fatalf("Send = %+v, %v; want the lock", s.d, s.err)
	}
	s.d.Lock.Release()
	if reqs, _, _ := c.Channel.Pending(); len(reqs) != 0 {
		t.Errorf("sent %+v to a command", reqs)
	}
}

// TestClientLiveApply: a request to a live apply is acknowledged by it;
// the client returns the acknowledgement.
func TestClientLiveApply(t *testing.T) {
	c := newClient(t)
	holdLock(t, c, ApplyHolder("wave.hcl", time.Now()))
	got := sendAsync(c, context.Background(), Request{Kind: KindDrop, Lots: []string{"api"}}, 10*time.Second)
	r := pending(t, c)
	if r.Kind != KindDrop || len(r.Lots) != 1 || r.Lots[0] != "api" || r.ID == "" {
		t.Fatalf("the apply got %+v", r)
	}
	if err := c.Channel.Ack(r, Ack{PID: 42, Results: []Result{{Lot: "api", Taken: true, Reason: "dropped"}}}); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if s.err != nil || !s.d.Live || s.d.Lock != nil || s.d.Ack.PID != 42 || len(s.d.Ack.Results) != 1 {
		t.Fatalf("Send = %+v, %v; want the apply's acknowledgement", s.d, s.err)
	}
}

// TestClientApplyEndsFirst: when the apply ends before taking the request,
// the client withdraws it and holds the lock (Ended); when it took the
// request and ended before acknowledging, the client says its effect is
// recorded.
func TestClientApplyEndsFirst(t *testing.T) {
	c := newClient(t)
	apply := holdLock(t, c, ApplyHolder("wave.hcl", time.Now()))
	got := sendAsync(c, context.Background(), Request{Kind: KindStop}, 10*time.Second)
	pending(t, c)
	apply.Release()
	s := <-got
	if s.err != nil || s.d.Lock == nil || !s.d.Ended || s.d.Live {
		t.Fatalf("Send = %+v, %v; want the lock, Ended", s.d, s.err)
	}
	s.d.Lock.Release()
	if reqs, _, _ := c.Channel.Pending(); len(reqs) != 0 {
		t.Errorf("the request was not withdrawn: %+v", reqs)
	}

	apply = holdLock(t, c, ApplyHolder("wave.hcl", time.Now()))
	got = sendAsync(c, context.Background(), Request{Kind: KindStop}, 10*time.Second)
	r := pending(t, c)
	if _, err := c.Channel.Withdraw(r.ID); err != nil { // taken, not acknowledged
		t.Fatal(err)
	}
	apply.Release()
	s = <-got
	if s.err != nil || !s.d.Live || s.d.Lock != nil || s.d.Ack.Note == "" {
		t.Fatalf("Send = %+v, %v; want a live delivery with a note", s.d, s.err)
	}
	if _, err := flock.TryAcquire(c.Lock, flock.Holder{}); err != nil {
		t.Errorf("the client kept the wave lock: %v", err)
	}
}

// TestClientQueued: a live apply that takes nothing within the wait leaves
// the request queued; so does a context that ends first, with its error.
func TestClientQueued(t *testing.T) {
	c := newClient(t)
	holdLock(t, c, ApplyHolder("wave.hcl", time.Now()))
	d, err := c.Send(context.Background(), Request{Kind: KindStop}, 10*time.Millisecond)
	if err != nil || !d.Queued || d.Live || d.Lock != nil {
		t.Fatalf("Send = %+v, %v; want Queued", d, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := sendAsync(c, ctx, Request{Kind: KindStop}, time.Hour)
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case s := <-got:
		if !errors.Is(s.err, context.Canceled) || !s.d.Queued {
			t.Fatalf("Send = %+v, %v; want Queued, context.Canceled", s.d, s.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Send did not return when its context ended")
	}
	if reqs, _, _ := c.Channel.Pending(); len(reqs) != 2 {
		t.Errorf("%d requests queued, want 2", len(reqs))
	}
}

// TestApplyHolds: a steering client sends to an apply's lock holder only.
func TestApplyHolds(t *testing.T) {
	for _, c := range []struct {
		what string
		want bool
	}{{"apply", true}, {"", true}, {"cadence drop", false}, {"clean", false}} {
		if got := ApplyHolds(flock.Holder{What: c.what}); got != c.want {
			t.Errorf("ApplyHolds(What %q) = %v", c.what, got)
		}
	}
	if h := ApplyHolder("w.hcl", time.Now()); !ApplyHolds(h) || h.PID != os.Getpid() || h.File != "w.hcl" {
		t.Errorf("ApplyHolder = %+v", h)
	}
}
