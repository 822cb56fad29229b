package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// TestBudgetUSD: a dollar ceiling reached refuses apply with the
// -budget-usd hint; -budget-usd raises it (never lowers it).
func TestBudgetUSD(t *testing.T) {
	cfg := mustLoad(t, strings.Replace(chain, `wave "w" {`, "wave \"w\" {\n  budget_usd = 5", 1))
	st := &state.State{Consumed: state.Consumed{CostMicros: 5_000_000}, Lots: map[string]*state.Lot{}}
	p, _ := build(t, cfg, st, nil, Options{})
	if !hasWarning(p, WarnBudget, true) || !strings.Contains(p.Warnings[len(p.Warnings)-1].Message, "apply -budget-usd N") || p.Totals.BudgetUSD != 5_000_000 {
		t.Errorf("no dollar-ceiling refusal: %+v %+v", p.Warnings, p.Totals)
	}
	p, _ = build(t, cfg, st, nil, Options{BudgetUSD: 20_000_000})
	if hasWarning(p, WarnBudget, true) || p.Totals.BudgetUSD != 20_000_000 {
		t.Errorf("-budget-usd did not raise: %+v %+v", p.Warnings, p.Totals)
	}
	p, _ = build(t, cfg, st, nil, Options{BudgetUSD: 1_000_000})
	if p.Totals.BudgetUSD != 5_000_000 {
		t.Errorf("-budget-usd lowered the ceiling: %s", p.Totals.BudgetUSD)
	}
}

// TestPlanResetAt: the plan carries the state's reset time and on_quota.
func TestPlanResetAt(t *testing.T) {
	cfg := mustLoad(t, strings.Replace(chain, `wave "w" {`, "wave \"w\" {\n  on_quota = \"wait\"", 1))
	reset := time.Date(2030, 1, 1, 15, 0, 0, 0, time.UTC)
	st := &state.State{Status: state.WaveSuspendedQuota, ResetAt: &reset, Lots: map[string]*state.Lot{}}
	p, _ := build(t, cfg, st, nil, Options{})
	if p.ResetAt == nil || !p.ResetAt.Equal(reset) || p.OnQuota != spec.OnQuotaWait {
		t.Errorf("reset %v, on_quota %q", p.ResetAt, p.OnQuota)
	}
	if p, _ := build(t, cfg, nil, nil, Options{}); p.ResetAt != nil {
		t.Errorf("reset %v without a state", p.ResetAt)
	}
}
