package agent

import (
	"context"
	"sync"
	"time"
)

// MaxExtensions bounds how many times a write step that still makes
// progress at its timeout is given more time.
const MaxExtensions = 3

// WatchTimeout cancels a session at s.Timeout, unless it is a write step
// whose worktree still moves (s.Moved), which gets a third of its timeout
// more (at least a second), at most MaxExtensions times; each extension is
// told through s.Note. It stops watching when ctx ends. The returned func
// says whether the timeout fired. No timeout (s.Timeout <= 0) never fires.
func WatchTimeout(ctx context.Context, cancel context.CancelFunc, s Session) func() bool {
	var mu sync.Mutex
	fired := false
	if s.Timeout <= 0 {
		return func() bool { return false }
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
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return fired
	}
}
