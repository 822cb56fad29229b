//go:build unix

package main

import (
	"maps"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent/codex"
	"github.com/cadence-run/cadence/internal/fakeapi/openai"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// An implement whose thread ends with a message that is not JSON gets the
// formatting retry: `codex exec resume` of the same thread asking for the
// report, which it gives; the lot goes on to done. The step's raw usage is
// exactly what the fake served across both runs (the CLI's running total
// less the first run's, added back), each turn's usage different so that a
// turn counted twice or missed shows.
func e2eCodexFormatRetry(t *testing.T) {
	e := newCodexE2E(t, nil, map[string]openai.Script{
		"a-implement0": {
			codexCommit("a", "f.txt", "f").WithUsage(openai.Usage{Input: 1000, Cached: 300, Output: 40, Reasoning: 7}),
			openai.Message("I added f.txt.").WithUsage(openai.Usage{Input: 1300, Cached: 1000, Output: 20, Reasoning: 3}),
			codexDone("added f.txt").WithUsage(openai.Usage{Input: 1500, Cached: 1200, Output: 60, Reasoning: 11}),
		},
		"a-review0": {codexReview("conform")},
	}, codexOpts{waveOpts: waveOpts{Lot: "  agent = agent.codex"}})
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	a := e.lot(e.state(), "a")
	impl := stepsOf(a, state.StepImplement)
	if a.Status != state.LotDone || len(impl) != 1 || impl[0].Status != state.StepOK {
		t.Fatalf("lot a %s (%s), steps %s", a.Status, a.Cause, steps(a))
	}
	reqs := e.codexTurns("a-implement0")
	if len(reqs) != 3 {
		t.Fatalf("%d implement requests, want 3 (exec, message, the resumed thread's report)", len(reqs))
	}
	if reqs[2].Thread != reqs[0].Thread || !strings.Contains(string(reqs[2].Body), codex.FormatRetryPrompt) ||
		!strings.Contains(string(reqs[2].Body), "I added f.txt.") {
		t.Errorf("the third request is not the same thread resumed (with its history) asking for the report")
	}
	want := map[string]int64{"input_tokens": 3800, "cached_input_tokens": 2500, "output_tokens": 120, "reasoning_output_tokens": 21}
	if got := rawCodex(impl[0]); !maps.Equal(got, want) || !maps.Equal(want, e.served("a-implement0")) {
		t.Errorf("implement raw usage %v, want %v (served %v)", got, want, e.served("a-implement0"))
	}
	if got, want := impl[0].Usage, (state.Usage{Input: 1300, CacheRead: 2500, Output: 120}); got != want {
		t.Errorf("implement usage %+v, want %+v", got, want)
	}
	// 1.25 $/M for 1300 input, 0.125 for 2500 cached, 10 for 120 output:
	// 1625 + 312.5 + 1200 µ$.
	if impl[0].CostMicros != 3138 || !impl[0].CostEstimated {
		t.Errorf("implement cost %d µ$ (estimated %v), want 3138", impl[0].CostMicros, impl[0].CostEstimated)
	}
}

// A thread that still gives no report after the formatting retry: the
// step fails with the cause, the lot is not integrated, and the work stays
// on its branch.
func e2eCodexNoReport(t *testing.T) {
	e := newCodexE2E(t, nil, map[string]openai.Script{
		"a-implement0": {codexCommit("a", "f.txt", "f"), openai.Message("I added f.txt."), openai.Message("Still no JSON, sorry.")},
	}, codexOpts{waveOpts: waveOpts{Lot: "  agent = agent.codex"}})
	base := e.git(e.repo, "rev-parse", "main")
	r := e.apply()
	r.wantCode(t, 1)
	r.wantOut(t, `gave no structured report`)
	a := e.lot(e.state(), "a")
	impl := stepsOf(a, state.StepImplement)
	if len(impl) != 1 || impl[0].Status != state.StepFailed || impl[0].Cause != "the session gave no structured report" {
		t.Fatalf("lot a %s (%s), steps %s", a.Status, a.Cause, steps(a))
	}
	if a.Status == state.LotDone || e.git(e.repo, "rev-parse", "main") != base {
		t.Errorf("lot a %s, main moved", a.Status)
	}
	if reqs := e.codexTurns("a-implement0"); len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), codex.FormatRetryPrompt) {
		t.Errorf("%d implement requests, want 3, the last the formatting retry", len(reqs))
	}
	if got := e.git(e.repo, "log", "--format=%s", "-1", "cadence/w/a"); got != "a: add f.txt (a)" {
		t.Errorf("the lot's branch tip %q", got)
	}
	if got, want := rawCodex(impl[0]), e.served("a-implement0"); !maps.Equal(got, want) {
		t.Errorf("implement raw usage %v, served %v", got, want)
	}
}

// A usage limit (429 usage_limit_reached with its reset time, which the
// CLI reports as usage_limit_exceeded "try again at …"): the wave suspends
// (exit 3) with the reset time recorded, to the minute the CLI's message
// gives; the next apply before it starts no session.
func e2eCodexQuotaSuspend(t *testing.T) {
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Minute)
	e := newCodexE2E(t, nil, map[string]openai.Script{
		"a-implement0": {openai.UsageLimit(reset)},
	}, codexOpts{waveOpts: waveOpts{Lot: "  agent = agent.codex"}})
	r := e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `\(suspended-quota\)`)
	st := e.state()
	impl := stepsOf(e.lot(st, "a"), state.StepImplement)
	if st.Status != state.WaveSuspendedQuota || st.ResetAt == nil || !st.ResetAt.Equal(reset) || len(impl) != 1 || impl[0].Status != state.StepQuota {
		t.Fatalf("wave %s, reset_at %v (want %v), steps %s", st.Status, st.ResetAt, reset, steps(e.lot(st, "a")))
	}
	n := len(e.oai.Requests())
	r = e.apply()
	r.wantCode(t, 3)
	r.wantOut(t, `no session starts before`)
	if m := len(e.oai.Requests()); m != n {
		t.Errorf("%d requests after an apply before the reset time, want still %d", m, n)
	}
}

// on_quota = "wait": a usage limit whose reset the CLI gives as a time
// already past when it is read (to the minute): no session waits for it,
// the step runs again in a fresh thread, the lot is done.
func e2eCodexQuotaWait(t *testing.T) {
	e := newCodexE2E(t, nil, map[string]openai.Script{
		"a-implement0":   {openai.UsageLimit(time.Now().Add(-2 * time.Minute))},
		"a-implement0~2": {codexCommit("a", "f.txt", "f"), codexDone("added f.txt")},
		"a-review0":      {codexReview("conform")},
	}, codexOpts{waveOpts: waveOpts{Wave: `  on_quota = "wait"`, Lot: "  agent = agent.codex"}})
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `a implement quota: `, `Wave "w": 1 of 1 lots done`)
	st := e.state()
	a := e.lot(st, "a")
	impl := stepsOf(a, state.StepImplement)
	if a.Status != state.LotDone || len(impl) != 2 || impl[0].Status != state.StepQuota || impl[1].Status != state.StepOK {
		t.Fatalf("lot a %s, steps %s", a.Status, steps(a))
	}
	if first, again := e.codexTurns("a-implement0"), e.codexTurns("a-implement0~2"); len(first) != 1 || len(again) == 0 || first[0].Thread == again[0].Thread {
		t.Errorf("the step did not run again in a fresh thread: %d then %d requests", len(first), len(again))
	}
	if st.Status != state.WaveDone || st.ResetAt != nil {
		t.Errorf("wave %s, reset_at %v", st.Status, st.ResetAt)
	}
}

// longTool is a command a codex session runs that outlives any test: its
// process is the session's tool child, found by its command line.
const longTool = "sleep 297"

// A codex implement that runs a long command and then waits for an answer
// the fake never gives: the step's timeout ends it; the CLI and its tool
// child are gone; the step has the served response's tokens (the turn
// never completed: from the thread's rollout) and the lot fails naming the
// step and the limit.
func e2eCodexTimeout(t *testing.T) {
	e := newCodexE2E(t, nil, map[string]openai.Script{
		"a-implement0": {openai.Exec(longTool).WithUsage(openai.Usage{Input: 900, Cached: 200, Output: 30, Reasoning: 5}), openai.Hang()},
	}, codexOpts{waveOpts: waveOpts{Lot: "  agent = agent.codex\n  timeout = \"6s\""}})
	p := e.start(e.applyArgs()...)
	if !testutil.Eventually(time.Minute, func() bool { return len(e.toolChildren()) > 0 }) {
		p.signal(syscall.SIGKILL)
		<-p.done
		t.Fatalf("the session's tool child never ran:\n%s", p.out.String())
	}
	r := p.wait()
	r.wantOut(t, `implement timed out after 6s`)
	if r.code == 0 {
		t.Errorf("exit 0 after a timed-out implement")
	}
	st := e.state()
	impl := stepsOf(e.lot(st, "a"), state.StepImplement)
	if len(impl) != 1 || impl[0].Status != state.StepTimedOut {
		t.Fatalf("steps %s", steps(e.lot(st, "a")))
	}
	e.noCodexLeft(impl[0].SessionID)
	if got, want := impl[0].Usage, (state.Usage{Input: 700, CacheRead: 200, Output: 30}); got != want || !impl[0].CostEstimated {
		t.Errorf("implement usage %+v (estimated %v), want %+v", got, impl[0].CostEstimated, want)
	}
	if st.Consumed.Counted != sumSteps(st) {
		t.Errorf("consumed %+v, steps count %d", st.Consumed, sumSteps(st))
	}
}

// cadence killed with SIGKILL while a codex session's tool child runs: no
// process of the session is left (the CLI, the tool child); the next apply
// recounts the killed session from its log and the thread's rollout (the
// served response's tokens, on the interrupted step and in the wave's
// totals, once), replays implement in a fresh thread, and the lot is done.
func e2eCodexKill9(t *testing.T) {
	e := newCodexE2E(t, nil, map[string]openai.Script{
		"a-implement0":   {openai.Exec(longTool).WithUsage(openai.Usage{Input: 800, Cached: 100, Output: 40, Reasoning: 6}), openai.Hang()},
		"a-implement0~2": {codexCommit("a", "f.txt", "f"), codexDone("added f.txt")},
		"a-review0":      {codexReview("conform")},
	}, codexOpts{waveOpts: waveOpts{Lot: "  agent = agent.codex"}})
	p := e.start(e.applyArgs()...)
	if !testutil.Eventually(time.Minute, func() bool { return len(e.toolChildren()) > 0 }) {
		p.signal(syscall.SIGKILL)
		<-p.done
		t.Fatalf("the session's tool child never ran:\n%s", p.out.String())
	}
	p.signal(syscall.SIGKILL)
	<-p.done // killed: wait would fail the test
	p.cancel()
	st := e.state()
	if len(st.Lots["a"].Steps) == 0 || st.Lots["a"].Steps[0].Status != state.StepRunning {
		t.Fatalf("after kill -9 the implement step is not recorded running: %s", steps(st.Lots["a"]))
	}
	session := st.Lots["a"].Steps[0].SessionID
	e.noCodexLeft(session)

	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	st = e.state()
	a := e.lot(st, "a")
	impl := stepsOf(a, state.StepImplement)
	if a.Status != state.LotDone || len(impl) != 2 || impl[0].SessionID != session || impl[0].Status != state.StepInterrupted || impl[1].Status != state.StepOK {
		t.Fatalf("lot a %s, steps %s", a.Status, steps(a))
	}
	if got, want := impl[0].Usage, (state.Usage{Input: 700, CacheRead: 100, Output: 40}); got != want {
		t.Errorf("killed session: usage %+v, want %+v (the served response's)", got, want)
	}
	if st.Consumed.Counted != sumSteps(st) {
		t.Errorf("consumed %+v, steps count %d", st.Consumed, sumSteps(st))
	}
	before := st.Consumed
	e.apply()
	if after := e.state().Consumed; after != before {
		t.Errorf("a further apply changed the consumed totals: %+v, then %+v", before, after)
	}
}

// toolChildren lists the live processes of the scenario's codex sessions
// that run longTool.
func (e *codexE2E) toolChildren() []string {
	var out []string
	for _, p := range marked("CODEX_HOME=" + e.codexHo) {
		if strings.Contains(p, longTool) && !strings.Contains(p, "codex") {
			out = append(out, p)
		}
	}
	return out
}
