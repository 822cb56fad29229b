package flock

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cadence-run/cadence/internal/testutil"
)

// TestLockWaitLogged: at debug level a lock found held and a lock waited
// for are logged on the cadence.flock sub-logger, with the wait.
func TestLockWaitLogged(t *testing.T) {
	var buf testutil.SyncBuffer
	prev := hclog.L() // (SetDefault returns nil before the first L)
	hclog.SetDefault(hclog.New(&hclog.LoggerOptions{Name: "cadence", Level: hclog.Debug, Output: &buf}))
	defer hclog.SetDefault(prev)
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := TryAcquire(path, Holder{Wave: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryAcquire(path, Holder{Wave: "w2"}); err == nil {
		t.Fatal("lock taken twice")
	}
	got := make(chan error, 1)
	go func() {
		l2, err := Acquire(context.Background(), path, Holder{Wave: "w3"})
		if err == nil {
			err = l2.Release()
		}
		got <- err
	}()
	for !strings.Contains(buf.String(), "lock waiting") {
		select {
		case err := <-got:
			t.Fatalf("Acquire returned before the lock was free: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	for _, want := range []string{
		"[DEBUG] cadence.flock: lock taken: path=" + path + " waited=0s",
		"[DEBUG] cadence.flock: lock held: path=" + path + " waited=0s wave=w1 pid=",
		"[DEBUG] cadence.flock: lock waiting: path=" + path,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Count(log, "lock taken") != 2 {
		t.Errorf("want two locks taken:\n%s", log)
	}
}
