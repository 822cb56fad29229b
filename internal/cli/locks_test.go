package cli

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/spec"
)

// heldRepo makes a git repository and takes its repository lock for
// wave "holder"; it returns the repo and the lock.
func heldRepo(t *testing.T) (*spec.Repo, *flock.Lock) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	l, err := flock.TryAcquire(layout.RepoLock(filepath.Join(dir, ".git")), flock.Holder{Wave: "holder", What: "repo app"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release() })
	return &spec.Repo{Name: "app", Path: dir, Base: "main"}, l
}

// TestWaitingHostWaitsForRepoLock: the run's repository lock is waited
// for (apply -lock-timeout) and taken once the other wave lets go; the
// wait is said once, naming the holder.
func TestWaitingHostWaitsForRepoLock(t *testing.T) {
	repo, held := heldRepo(t)
	said := make(chan string, 4)
	h := waitingHost{ctx: context.Background(), timeout: 10 * time.Minute, onHeld: func(what string) func(*flock.HeldError) {
		return func(he *flock.HeldError) { said <- what + ": " + he.Error() }
	}}
	got := make(chan error, 1)
	var release func()
	go func() {
		var err error
		release, err = h.LockRepo(context.Background(), repo, flock.Holder{Wave: "w"})
		got <- err
	}()
	select {
	case s := <-said:
		if !strings.HasPrefix(s, "repo app's lock: wave \"holder\"") {
			t.Errorf("said %q", s)
		}
	case err := <-got:
		t.Fatalf("LockRepo returned before waiting: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the wait was never said")
	}
	held.Release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
		release()
	case <-time.After(time.Minute):
		t.Fatal("LockRepo did not return after the release")
	}
}

// TestWaitingHostTimesOut: past the timeout the refusal names the holder.
func TestWaitingHostTimesOut(t *testing.T) {
	repo, _ := heldRepo(t)
	h := waitingHost{ctx: context.Background(), timeout: 20 * time.Millisecond, onHeld: func(string) func(*flock.HeldError) { return nil }}
	_, err := h.LockRepo(context.Background(), repo, flock.Holder{Wave: "w"})
	var he *flock.HeldError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), `repo app is used by another wave: wave "holder"`) || he.Waited == 0 {
		t.Fatalf("got %v", err)
	}
}

// TestPreflightWaitsForRepoLock: with a lock timeout the preflight waits
// for a repository held by another wave and reports it free once let go;
// past the timeout it reports the holder and the wait.
func TestPreflightWaitsForRepoLock(t *testing.T) {
	repo, held := heldRepo(t)
	m := machine{ctx: context.Background(), getenv: func(string) string { return "" }, wave: "w",
		lockTimeout: 20 * time.Millisecond, onHeld: func(string) func(*flock.HeldError) { return nil }}
	if f := m.Repo(repo); !strings.Contains(f.HeldBy, `wave "holder"`) || !strings.HasSuffix(f.HeldBy, "; still held after waiting 20ms") {
		t.Fatalf("held by %q", f.HeldBy)
	}
	waiting := make(chan struct{})
	m.lockTimeout = 10 * time.Minute
	m.onHeld = func(string) func(*flock.HeldError) { return func(*flock.HeldError) { close(waiting) } }
	got := make(chan string, 1)
	go func() { got <- m.Repo(repo).HeldBy }()
	select {
	case <-waiting:
	case <-time.After(time.Minute):
		t.Fatal("the preflight did not wait")
	}
	held.Release()
	select {
	case by := <-got:
		if by != "" {
			t.Fatalf("held by %q after the release", by)
		}
	case <-time.After(time.Minute):
		t.Fatal("the preflight did not end after the release")
	}
}
