package agent

import (
	"context"
	"testing"
	"time"
)

func TestTimeoutCause(t *testing.T) {
	for _, tc := range []struct {
		step  string
		limit time.Duration
		ext   int
		want  string
	}{
		{"implement", 20 * time.Minute, 2, "implement timed out after 20m (extended 2×)"},
		{"review", 10 * time.Minute, 0, "review timed out after 10m"},
		{"fix", 90 * time.Minute, 1, "fix timed out after 1h30m (extended 1×)"},
		{"implement", 45 * time.Second, 0, "implement timed out after 45s"},
		{"", 0, 0, "timed out"},
	} {
		if got := TimeoutCause(tc.step, tc.limit, tc.ext); got != tc.want {
			t.Errorf("TimeoutCause(%q, %v, %d) = %q, want %q", tc.step, tc.limit, tc.ext, got, tc.want)
		}
	}
}

// TestWatchTimeoutCountsExtensions: a write step that keeps moving is
// extended MaxExtensions times, then stopped, and says so.
func TestWatchTimeoutCountsExtensions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := Session{Timeout: time.Millisecond, Moved: func() bool { return true }}
	state := WatchTimeout(ctx, cancel, s)
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the timeout never fired")
	}
	if fired, ext := state(); !fired || ext != MaxExtensions {
		t.Errorf("fired %v after %d extensions, want true after %d", fired, ext, MaxExtensions)
	}
}
