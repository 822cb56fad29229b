package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cadence-run/cadence/spec"
)

// MaxExtensions bounds how many times a write step that still makes
// progress at its timeout is given more time.
const MaxExtensions = 3

// WatchTimeout cancels a session at s.Timeout, unless it is a write step
// whose worktree still moves (s.Moved), which gets a third of its timeout
// more (at least a second), at most MaxExtensions times; each extension is
// told through s.Note. It stops watching when ctx ends. The returned func
// says whether the timeout fired and how many times it was extended. No
// timeout (s.Timeout <= 0) never fires.
func WatchTimeout(ctx context.Context, cancel context.CancelFunc, s Session) func() (fired bool, extensions int) {
	var mu sync.Mutex
	fired, extensions := false, 0
	if s.Timeout <= 0 {
		return func() (bool, int) { return false, 0 }
	}
	go func() {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		for ext := 0; ; ext++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !s.ReadOnly && ext < MaxExtensions && s.Moved != nil && s.Moved() {
				if s.Note != nil {
					s.Note("timeout reached while the worktree still changes: extended")
				}
				mu.Lock()
				extensions++
				mu.Unlock()
				t.Reset(max(s.Timeout/3, time.Second))
				continue
			}
			mu.Lock()
			fired = true
			mu.Unlock()
			cancel()
			return
		}
	}()
	return func() (bool, int) {
		mu.Lock()
		defer mu.Unlock()
		return fired, extensions
	}
}

// TimeoutCause says why a step was stopped at its timeout, in the user's
// terms: "implement timed out after 20m (extended 2×)" — the step, the
// limit as configured, and the extensions WatchTimeout gave it (each a
// third of the limit more, at least a second).
func TimeoutCause(step string, limit time.Duration, extensions int) string {
	c := "timed out"
	if step != "" {
		c = step + " " + c
	}
	if limit > 0 {
		c += " after " + spec.FormatDuration(limit)
	}
	if extensions > 0 {
		c += fmt.Sprintf(" (extended %d×)", extensions)
	}
	return c
}
