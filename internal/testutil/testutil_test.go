package testutil

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&b, "%d", i%10)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Errorf("%d bytes written, want 800", n)
	}
}

func TestWaitForAndEventually(t *testing.T) {
	var n atomic.Int32
	WaitFor(t, "three calls", func() bool { return n.Add(1) >= 3 })
	if n.Load() != 3 {
		t.Errorf("cond asked %d times after it held", n.Load())
	}
	start := time.Now()
	if Eventually(120*time.Millisecond, func() bool { return false }) {
		t.Error("Eventually of a false cond held")
	}
	if time.Since(start) < 120*time.Millisecond {
		t.Error("Eventually gave up early")
	}
	if !Eventually(time.Second, func() bool { return true }) {
		t.Error("Eventually of a true cond failed")
	}
}
