package executor

import (
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
)

// TestAPIRetrySchedule: the waits double from the base with at most a
// quarter more, APIRetries of them, none that would end past the step's
// timeout counted from its first session.
func TestAPIRetrySchedule(t *testing.T) {
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	tries := apiTries{start: start}
	now := start
	for i, base := range []time.Duration{30 * time.Second, 60 * time.Second, 120 * time.Second} {
		wait, ok := tries.next(now, 0, 45*time.Minute)
		if !ok || wait < base || wait > base+base/4 {
			t.Fatalf("retry %d: wait %v %v, want %v to %v", i+1, wait, ok, base, base+base/4)
		}
		now = now.Add(wait)
	}
	if _, ok := tries.next(now, 0, 45*time.Minute); ok {
		t.Errorf("a retry after %d", APIRetries)
	}
	tries = apiTries{start: start}
	if _, ok := tries.next(start.Add(50*time.Second), 0, time.Minute); ok || tries.n != 0 {
		t.Errorf("a retry whose wait ends past the timeout")
	}
	if wait, ok := tries.next(start, time.Millisecond, 0); !ok || wait > 2*time.Millisecond {
		t.Errorf("base 1ms, no timeout: %v %v", wait, ok)
	}
}

func TestAPIFailureClasses(t *testing.T) {
	for _, c := range []agent.APIFailure{agent.APIOverloaded, agent.APINetwork} {
		if !c.Transient() || c.StopsWave() {
			t.Errorf("%s", c)
		}
	}
	for _, c := range []agent.APIFailure{agent.APIUnreachable, agent.APIAuth, agent.APICredit} {
		if c.Transient() || !c.StopsWave() || apiAdvice(c, "x", 0, 0) == "x" {
			t.Errorf("%s", c)
		}
	}
	if agent.APINone.Transient() || agent.APINone.StopsWave() {
		t.Error("none")
	}
}
