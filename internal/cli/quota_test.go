package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// TestQuotaGate: what apply does before a recorded reset time.
func TestQuotaGate(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 18, 0, 0, time.Local)
	reset := now.Add(42 * time.Minute)
	w := &wave{file: "w.hcl"}
	plan := func(onQuota spec.OnQuota, reset *time.Time, agents int) *planner.Plan {
		return &planner.Plan{ResetAt: reset, OnQuota: onQuota, Totals: planner.Totals{PendingAgent: agents}}
	}
	past := now.Add(-time.Minute)
	for _, tc := range []struct {
		name   string
		p      *planner.Plan
		ignore bool
		until  bool
		code   ExitCode
		out    string
	}{
		{"suspend: exit 3 at once", plan(spec.OnQuotaSuspend, &reset, 1), false, false, ExitApplySuspended, "lasts until 15:00 (in 42m): no session starts before. Apply again after "},
		{"-ignore-quota", plan(spec.OnQuotaSuspend, &reset, 1), true, false, -1, ""},
		{"wait", plan(spec.OnQuotaWait, &reset, 1), false, true, -1, `sessions wait for it (on_quota = "wait"`},
		{"passed", plan(spec.OnQuotaSuspend, &past, 1), false, false, -1, ""},
		{"none recorded", plan(spec.OnQuotaSuspend, nil, 1), false, false, -1, ""},
		{"command lots only", plan(spec.OnQuotaSuspend, &reset, 0), false, false, -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			until, code := (&env{}).quotaGate(w, tc.p, tc.ignore, now, &out)
			if code != tc.code || (until != nil) != tc.until || (tc.out == "") != (out.Len() == 0) || !strings.Contains(out.String(), tc.out) {
				t.Errorf("until %v, code %d, out %q", until, code, out.String())
			}
		})
	}
}

// TestUSDHint: the -budget-usd suggested after a USD suspension is above
// what was spent, in whole cents, and reads back as typed.
func TestUSDHint(t *testing.T) {
	for _, tc := range []struct {
		budget, spent int64
		want          string
	}{
		{10_000, 420_400, "0.44"},
		{10_000, 10_000, "0.02"},
		{40_000_000, 41_000_000, "81.00"},
		{0, 5, "0.02"},
	} {
		got := usdHint(tc.budget, tc.spent)
		u, err := spec.ParseUSD(got)
		if got != tc.want || err != nil || int64(u) <= tc.spent {
			t.Errorf("usdHint(%d, %d) = %q (%v), want %q above the spent", tc.budget, tc.spent, got, err, tc.want)
		}
	}
}
