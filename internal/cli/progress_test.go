package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor"
)

// TestLiveBlockIsNotColour: NO_COLOR and -no-color turn colour off, not
// the live block; the block needs a terminal that moves the cursor (not
// TERM=dumb) and no -json.
func TestLiveBlockIsNotColour(t *testing.T) {
	for _, tc := range []struct {
		name             string
		vars             map[string]string
		noColor, tty     bool
		json             bool
		wantLive, wantCo bool
	}{
		{name: "terminal", tty: true, wantLive: true, wantCo: true},
		{name: "NO_COLOR", vars: map[string]string{"NO_COLOR": "1"}, tty: true, wantLive: true},
		{name: "-no-color", noColor: true, tty: true, wantLive: true},
		{name: "TERM=dumb", vars: map[string]string{"TERM": "dumb"}, tty: true, wantCo: true},
		{name: "no terminal", vars: map[string]string{}},
		{name: "-json", tty: true, json: true, wantCo: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, stdout, _ := testEnv(tc.vars, tc.tty)
			e.noColor = tc.noColor
			if got := e.colorOn(e.stdout); got != tc.wantCo {
				t.Errorf("colour %v, want %v", got, tc.wantCo)
			}
			p := newProgress(e, tc.json, "")
			defer p.close()
			if p.live != tc.wantLive {
				t.Fatalf("live block %v, want %v", p.live, tc.wantLive)
			}
			p.event(executor.Event{Time: time.Now(), Kind: executor.EvStepStart, Lot: "api", Step: "implement", Model: "sonnet"})
			out := stdout.String()
			block := strings.Contains(out, "▸ api") && strings.Contains(out, "0 done · ")
			if block != tc.wantLive {
				t.Errorf("live block drawn %v, want %v:\n%q", block, tc.wantLive, out)
			}
		})
	}
}

// TestProgressCounts: a lot that ends without having started (blocked,
// dropped while queued) is counted by its status and never taken off the
// running count.
func TestProgressCounts(t *testing.T) {
	e, _, _ := testEnv(map[string]string{}, false)
	p := newProgress(e, false, "")
	defer p.close()
	p.total = 3
	now := time.Now()
	p.event(executor.Event{Time: now, Kind: executor.EvLotStart, Lot: "a"})
	p.event(executor.Event{Time: now, Kind: executor.EvLotEnd, Lot: "b", Status: "handed-back", Message: "dropped by the lead"})
	p.event(executor.Event{Time: now, Kind: executor.EvLotEnd, Lot: "c", Status: "blocked"})
	if p.counts["running"] != 1 || p.counts["handed-back"] != 1 || p.counts["blocked"] != 1 {
		t.Errorf("counts %v", p.counts)
	}
	p.event(executor.Event{Time: now, Kind: executor.EvLotEnd, Lot: "a", Status: "done"})
	if p.counts["running"] != 0 || p.counts["done"] != 1 {
		t.Errorf("counts %v", p.counts)
	}
}
