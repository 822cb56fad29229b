// Package testutil holds helpers shared by cadence's tests: a buffer safe
// for concurrent writers and readers, polling waits, and the attribute
// tables of docs/wave-file.md an agent kind's generated docs are checked
// against (AttributeDocsFile). Only tests import
// it (internal/archtest checks).
package testutil

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer safe for concurrent use: a process's two
// outputs, a logger and the test reading what it wrote. The zero value is
// empty and ready.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitTimeout bounds WaitFor: a bound, not a timing (each condition a test
// waits for comes true in every correct run).
const WaitTimeout = time.Minute

// WaitFor polls cond every 5 ms until it holds; after WaitTimeout it fails
// the test, saying it waited for what.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Eventually polls cond every 50 ms until it holds or d passes, and
// reports whether it held (cond is asked once more at the end).
func Eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}
