package render

import (
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

func TestResetLabel(t *testing.T) {
	at := time.Date(2026, 11, 30, 14, 18, 0, 0, time.Local)
	for _, tc := range []struct {
		reset time.Time
		want  string
	}{
		{at.Add(42 * time.Minute), "15:00 (in 42m)"},
		{at.Add(42*time.Minute + 20*time.Second), "15:00 (in 42m)"},
		{at.Add(30 * time.Second), "14:18 (in 30s)"},
		{at.Add(26 * time.Hour), "Dec 1 16:18 (in 26h)"},
		{at.Add(-time.Minute), "14:17 (passed)"},
	} {
		if got := ResetLabel(tc.reset, at); got != tc.want {
			t.Errorf("ResetLabel(%v) = %q, want %q", tc.reset, got, tc.want)
		}
	}
}

// TestQuotaLine: plan shows a recorded reset time while it lasts, with
// what apply will do about it.
func TestQuotaLine(t *testing.T) {
	at := time.Date(2026, 11, 30, 14, 18, 0, 0, time.Local)
	reset := at.Add(42 * time.Minute)
	p := &planner.Plan{ResetAt: &reset, OnQuota: spec.OnQuotaSuspend}
	if got := quotaSummary(p, at); got != "usage limit until 15:00 (in 42m): apply starts no session before (-ignore-quota to try anyway)" {
		t.Errorf("suspend: %q", got)
	}
	p.OnQuota = spec.OnQuotaWait
	if got := quotaSummary(p, at); !strings.HasPrefix(got, "usage limit until 15:00 (in 42m): apply waits for it") {
		t.Errorf("wait: %q", got)
	}
	if got := quotaSummary(p, reset.Add(time.Second)); got != "" {
		t.Errorf("passed: %q", got)
	}
	if got := quotaSummary(&planner.Plan{}, at); got != "" {
		t.Errorf("none: %q", got)
	}
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return at }
	found := false
	for _, l := range totalsLines(p) {
		found = found || l.label == "Quota" && strings.Contains(l.value, "15:00 (in 42m)")
	}
	if !found {
		t.Errorf("no Quota line in %+v", totalsLines(p))
	}
}

// TestBudgetSummarySpentEstimated: a spent cost computed at list prices
// is marked so in the plan, as in the end table and status.
func TestBudgetSummarySpentEstimated(t *testing.T) {
	tot := planner.Totals{Spent: 1200, SpentMicro: 2910}
	if got := budgetSummary(tot); !strings.Contains(got, "spent 1.2k ($0.00291)") {
		t.Errorf("reported: %q", got)
	}
	tot.SpentEstimated = true
	if got := budgetSummary(tot); !strings.Contains(got, "spent 1.2k (~$0.00291, estimated)") {
		t.Errorf("estimated: %q", got)
	}
}
