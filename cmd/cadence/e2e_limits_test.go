//go:build unix

package main

import (
	"regexp"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// usageLimit is a 429 whose message gives the reset time. The agent block
// of the e2e waves sets max_retries = 0, so the CLI fails at once (with
// retries, a 429 without retry-after is retried for minutes).
func usageLimit(reset time.Time) fakeapi.Turn {
	return fakeapi.HTTPError(429, "rate_limit_error", "usage limit reached; resets at "+reset.UTC().Format(time.RFC3339))
}

// (e) A usage limit with on_quota = "suspend" (the default): the wave
// suspends with the reset time (exit 3), and says when to apply again.
func e2eQuotaSuspend(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {usageLimit(reset)},
	}, waveOpts{})
	r := e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `\(suspended-quota\)`, regexp.QuoteMeta("The agent hit a usage limit: apply again after "+reset.Local().Format(time.RFC1123)+"."))
	st := e.state()
	if st.Status != state.WaveSuspendedQuota || st.ResetAt == nil || !st.ResetAt.Equal(reset) {
		t.Errorf("wave %s, reset_at %v, want suspended-quota, %v", st.Status, st.ResetAt, reset)
	}
	a := e.lot(st, "a")
	if got := steps(a); a.Status != state.LotSuspended || got != "implement:quota" {
		t.Errorf("lot a %s, steps %q", a.Status, got)
	}
	if n := len(e.turns("a-implement0")); n != 1 {
		t.Errorf("%d implement requests, want 1 (no retries)", n)
	}
}

// (e) The same limit with on_quota = "wait": no session starts before the
// reset; then the step runs again in a fresh session, and the wave ends.
// The reset is given as a delay ("resets in 3 seconds"), counted from the
// end of the session, so a slow machine cannot make it pass before cadence
// sees it.
func e2eQuotaWait(t *testing.T) {
	const wait = 3 * time.Second
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0":   {fakeapi.HTTPError(429, "rate_limit_error", "usage limit reached; resets in 3 seconds")},
		"a-implement0~2": implementScript(),
		"a-review0":      {review("conform")},
	}, waveOpts{Wave: `  on_quota = "wait"`})
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `a implement quota: `, `usage limit: no session starts before \d\d:\d\d:\d\d`, `Wave "w": 1 of 1 lots done`)
	st := e.state()
	a := e.lot(st, "a")
	impl := stepsOf(a, state.StepImplement)
	if a.Status != state.LotDone || len(impl) != 2 || impl[0].Status != state.StepQuota || impl[1].Status != state.StepOK {
		t.Fatalf("lot a %s, steps %s", a.Status, steps(a))
	}
	if impl[0].SessionID == impl[1].SessionID {
		t.Error("the step ran again in the same session")
	}
	again := e.turns("a-implement0~2")
	if len(again) == 0 {
		t.Fatal("no session after the reset")
	}
	if first := e.turns("a-implement0"); len(first) != 1 || again[0].Time.Sub(first[0].Time) < wait {
		t.Errorf("the session after the limit started %v after it", again[0].Time.Sub(first[0].Time))
	}
	if st.Status != state.WaveDone || st.ResetAt != nil {
		t.Errorf("wave %s, reset_at %v", st.Status, st.ResetAt)
	}
}

// (h) The wave budget runs out mid-wave: the running session ends, no new
// one starts, the rest is suspended (exit 3); apply -budget 1M resumes
// without redoing anything, and the wave finishes.
func e2eBudget(t *testing.T) {
	big := fakeapi.Usage{InputTokens: 150_000, OutputTokens: 2_000}
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {commit("f.txt", "f").WithUsage(big), writeDone("added f.txt")},
		"a-review0":    {review("conform")},
		"b-implement0": {fakeapi.Bash("echo b > b.txt && git add b.txt && git commit -q -m 'b: add b (b)'"), writeDone("added b.txt")},
		"b-review0":    {review("conform")},
	}, waveOpts{Budget: "100k", More: `
lot "b" {
  repo       = repo.app
  brief      = "Add b.txt."
  depends_on = [lot.a]
}
`})
	r := e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `\(suspended-budget\)`, `The budget is spent: raise it to resume, e\.g\. cadence apply -budget`)
	st := e.state()
	a, b := e.lot(st, "a"), e.lot(st, "b")
	if st.Status != state.WaveSuspendedBudget || a.Status != state.LotSuspended || b.Status != state.LotSuspended {
		t.Errorf("wave %s, lot a %s (%s), lot b %s", st.Status, a.Status, steps(a), b.Status)
	}
	if got := steps(a); got != "implement:ok test:ok" {
		t.Errorf("lot a's steps %q: want the implement only, no review started", got)
	}
	if st.Consumed.Counted < 152_000 {
		t.Errorf("consumed %d", st.Consumed.Counted)
	}
	if n := len(e.turns("a-review0")) + len(e.turns("b-implement0")); n != 0 {
		t.Errorf("%d requests of sessions that should not start", n)
	}

	r = e.apply("-budget", "1M")
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 2 of 2 lots done`)
	st = e.state()
	if a, b := e.lot(st, "a"), e.lot(st, "b"); a.Status != state.LotDone || b.Status != state.LotDone {
		t.Errorf("lot a %s (%s), lot b %s (%s)", a.Status, steps(a), b.Status, steps(b))
	}
	if n := len(e.turns("a-implement0")); n != 2 {
		t.Errorf("implement of a replayed: %d requests", n)
	}
	if st.Status != state.WaveDone {
		t.Errorf("wave %s", st.Status)
	}
}
