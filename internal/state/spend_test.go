package state

import (
	"strings"
	"testing"
	"time"
)

// TestSpendByVendor sums session steps per vendor; a session step of a
// state written before vendors were recorded counts as Claude Code's; a
// test step counts for none.
func TestSpendByVendor(t *testing.T) {
	lots := map[string]*Lot{
		"a": {Status: LotDone, Steps: []Step{
			{Kind: StepImplement, Agent: "claude", Vendor: "claude", Usage: Usage{Input: 10, CacheWrite: 5, CacheRead: 100, Output: 20}, CostMicros: 3000},
			{Kind: StepTest, Usage: Usage{Input: 99}},
			{Kind: StepReview, Agent: "reviewer", Vendor: "codex", Usage: Usage{Input: 7, CacheRead: 40, Output: 3}, CostMicros: 500, CostEstimated: true,
				RawUsage: map[string]int64{"input_tokens": 47, "cached_input_tokens": 40, "output_tokens": 3}},
		}},
		"old": {Status: LotDone, Steps: []Step{{Kind: StepReview, Usage: Usage{Input: 1, Output: 1}, CostMicros: 10}}},
	}
	got := SpendByVendor(lots)
	want := []VendorSpend{
		{Vendor: "claude", Sessions: 2, Usage: Usage{Input: 11, CacheWrite: 5, CacheRead: 100, Output: 21}, CostMicros: 3010},
		{Vendor: "codex", Sessions: 1, Usage: Usage{Input: 7, CacheRead: 40, Output: 3}, CostMicros: 500, CostEstimated: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("vendor %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if SpendByVendor(map[string]*Lot{"c": {Status: LotDone, Steps: []Step{{Kind: StepRun}}}}) != nil {
		t.Error("a wave without sessions has vendors")
	}
}

// TestValidateStepAgent: a session step's agent, vendor and raw usage are
// checked (recorded together, on session steps, counts not negative); a
// step recorded without them (an older state) is valid.
func TestValidateStepAgent(t *testing.T) {
	now := time.Now()
	ok := func(s Step) *State {
		s.Started, s.Status = now, StepOK
		return &State{Lots: map[string]*Lot{"a": {Status: LotDone, Steps: []Step{s}}}}
	}
	if err := Validate(ok(Step{Kind: StepReview})); err != nil {
		t.Errorf("a step without agent (older state): %v", err)
	}
	if err := Validate(ok(Step{Kind: StepReview, Agent: "r", Vendor: "codex", RawUsage: map[string]int64{"input_tokens": 3}})); err != nil {
		t.Errorf("a recorded agent: %v", err)
	}
	for _, tc := range []struct {
		s    Step
		want string
	}{
		{Step{Kind: StepTest, Agent: "claude", Vendor: "claude"}, "for session steps"},
		{Step{Kind: StepReview, Agent: "r"}, "recorded together"},
		{Step{Kind: StepReview, Vendor: "codex"}, "recorded together"},
		{Step{Kind: StepReview, Agent: "r", Vendor: "codex", RawUsage: map[string]int64{"input_tokens": -1}}, "raw_usage"},
		{Step{Kind: StepReview, Agent: "r", Vendor: "codex", RawUsage: map[string]int64{"": 1}}, "raw_usage"},
	} {
		if err := Validate(ok(tc.s)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("step %+v: error %v, want one saying %q", tc.s, err, tc.want)
		}
	}
}
