//go:build unix

package main

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2EQuota runs the usage-limit and dollar-budget scenarios of issue
// 11 end to end with the real CLI (see TestE2E).
func TestE2EQuota(t *testing.T) {
	fakeapi.FindCLI(t)
	for _, sc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"quota-reset-from-headers", e2eQuotaHeaders},
		{"budget-usd", e2eBudgetUSD},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t)
		})
	}
}

// subscriptionLimit is a 429 whose reset time is only in the API's
// anthropic-ratelimit-unified-* headers, as the API sends a subscription's
// usage limit. Its message gives no time.
func subscriptionLimit(reset time.Time) fakeapi.Turn {
	rs := strconv.FormatInt(reset.Unix(), 10)
	return fakeapi.HTTPError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit").
		WithHeader("anthropic-ratelimit-unified-status", "rejected").
		WithHeader("anthropic-ratelimit-unified-reset", rs).
		WithHeader("anthropic-ratelimit-unified-representative-claim", "five_hour")
}

// A usage limit whose reset time the API gives in headers only: the CLI
// (logged in with a subscription) passes it on in its stream and its
// result text; the wave suspends with that time (exit 3) and says it.
// apply again before it stops at once (exit 3) without a session; plan
// shows the time; -ignore-quota starts a session anyway.
func e2eQuotaHeaders(t *testing.T) {
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0":   {subscriptionLimit(reset)},
		"a-implement0~2": implementScript(),
		"a-review0":      {review("conform")},
	}, waveOpts{})
	// A subscription login: the CLI reads the rate-limit headers only then.
	e.env = fakeapi.SetEnv(e.env, "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fake")

	r := e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `\(suspended-quota\)`, regexp.QuoteMeta("The agent hit a usage limit: apply again after "+reset.Local().Format(time.RFC1123)+"."))
	st := e.state()
	if st.Status != state.WaveSuspendedQuota || st.ResetAt == nil || !st.ResetAt.Equal(reset) {
		t.Fatalf("wave %s, reset_at %v, want suspended-quota, %v", st.Status, st.ResetAt, reset)
	}
	if n := len(e.turns("a-implement0")); n != 1 {
		t.Fatalf("%d implement requests, want 1", n)
	}

	r = e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `The agent's usage limit lasts until \d\d:\d\d \(in (1h59m|2h)\): no session starts before\. Apply again after `+regexp.QuoteMeta(reset.Local().Format(time.RFC1123)), `-ignore-quota`)
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d requests after an apply before the reset time, want still 1", n)
	}
	if st := e.state(); st.Status != state.WaveSuspendedQuota || st.ResetAt == nil || !st.ResetAt.Equal(reset) {
		t.Errorf("the refused apply changed the state: %s, %v", st.Status, st.ResetAt)
	}

	r = e.cadence("plan", "-no-color", e.wave)
	r.wantCode(t, 0)
	r.wantOut(t, `Quota:\s+usage limit until `+regexp.QuoteMeta(reset.Local().Format("15:04"))+` \(in (1h59m|2h)\)`)

	r = e.cadence("status", "-no-color", e.wave)
	r.wantCode(t, 0)
	r.wantOut(t, `Usage limit until `+regexp.QuoteMeta(reset.Local().Format("15:04"))+` \(in (1h59m|2h)\)\.`)

	r = e.apply("-ignore-quota")
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	st = e.state()
	if a := e.lot(st, "a"); a.Status != state.LotDone || st.Status != state.WaveDone || st.ResetAt != nil {
		t.Errorf("after -ignore-quota: lot a %s (%s), wave %s, reset_at %v", a.Status, steps(a), st.Status, st.ResetAt)
	}
	if len(e.turns("a-implement0~2")) == 0 {
		t.Error("-ignore-quota started no session")
	}
}

// The dollar ceiling (budget_usd) is reached by the first session: the wave
// suspends (exit 3) naming that ceiling and -budget-usd; apply -budget-usd
// raises it and the wave finishes without redoing the implement.
func e2eBudgetUSD(t *testing.T) {
	big := fakeapi.Usage{InputTokens: 200_000, OutputTokens: 2_000}
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {commit("f.txt", "f").WithUsage(big), writeDone("added f.txt")},
		"a-review0":    {review("conform")},
	}, waveOpts{Wave: `  budget_usd = 0.01`})
	r := e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `\(suspended-budget\)`)
	// The hint names an amount above what was spent, typed as is.
	hint := regexp.MustCompile(`The dollar budget is spent \(budget_usd \$0\.01; \$[0-9.]+ spent\): raise it to resume, e\.g\. cadence apply (-budget-usd \S+ \S+)\n`).FindStringSubmatch(r.out)
	if hint == nil {
		t.Fatalf("no -budget-usd hint in:\n%s", r.out)
	}
	st := e.state()
	a := e.lot(st, "a")
	if st.Status != state.WaveSuspendedBudget || a.Status != state.LotSuspended || st.Consumed.CostMicros < 10_000 || st.BudgetMicros != 10_000 {
		t.Fatalf("wave %s, lot a %s (%s), cost %d µ$, budget %d µ$", st.Status, a.Status, steps(a), st.Consumed.CostMicros, st.BudgetMicros)
	}
	if n := len(e.turns("a-review0")); n != 0 {
		t.Errorf("%d review requests after the ceiling", n)
	}

	// Without a higher ceiling, apply refuses and says how to raise it.
	r = e.apply()
	r.wantCode(t, 2)
	r.wantOut(t, `dollar budget \(budget_usd\): no session can start; raise it with apply -budget-usd N`)

	r = e.typeIn("cadence apply -auto-approve -no-color " + hint[1])
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	spent := st.Consumed.CostMicros
	st = e.state()
	if a := e.lot(st, "a"); a.Status != state.LotDone || st.Status != state.WaveDone || st.BudgetMicros <= spent {
		t.Errorf("lot a %s (%s), wave %s, budget %d µ$ (spent before %d µ$)", a.Status, steps(a), st.Status, st.BudgetMicros, spent)
	}
	if n := len(e.turns("a-implement0")); n != 2 {
		t.Errorf("implement of a replayed: %d requests", n)
	}
}
