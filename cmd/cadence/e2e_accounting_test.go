//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// TestE2EAccounting: tokens and cost of sessions that did not end by
// themselves, with the real CLI.
func TestE2EAccounting(t *testing.T) {
	fakeapi.FindCLI(t)
	for _, sc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"timeout", e2eTimeoutCounted},
		{"kill-9", e2eKilledCountedOnResume},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t)
		})
	}
}

// sumSteps is the counted tokens of every step of the state.
func sumSteps(st *state.State) int64 {
	var n int64
	for _, l := range st.Lots {
		n += l.Usage().Counted()
	}
	return n
}

// An implement session killed by its timeout after a served turn (it
// committed, so the timeout was extended once; then it hung): the step has
// the served turn's tokens and a cost estimated at list prices, the wave's
// consumed cost is marked estimated in the state and the end table, and
// the cause names the step and the limit.
func e2eTimeoutCounted(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {
			commit("f.txt", "f").WithUsage(fakeapi.Usage{InputTokens: 1000, OutputTokens: 200}),
			fakeapi.Hang(),
		},
	}, waveOpts{Lot: `  timeout = "20s"`})
	r := e.apply()
	if r.code == 0 {
		t.Errorf("exit 0 after a timed-out implement")
	}
	r.wantOut(t, `implement timed out after 20s( \(extended \d×\))?`, `~\$0\.\d+ \(estimated\)`)
	st := e.state()
	impl := stepsOf(e.lot(st, "a"), state.StepImplement)
	if len(impl) != 1 {
		t.Fatalf("implement steps: %s", steps(e.lot(st, "a")))
	}
	s := impl[0]
	if s.Status != state.StepTimedOut || !regexp.MustCompile(`^implement timed out after 20s`).MatchString(s.Cause) {
		t.Errorf("implement %s: %q", s.Status, s.Cause)
	}
	if s.Usage != (state.Usage{Input: 1000, Output: 200}) {
		t.Errorf("implement usage %+v, want the served turn's 1000 in, 200 out", s.Usage)
	}
	if s.CostMicros <= 0 || !s.CostEstimated {
		t.Errorf("implement cost %d µ$, estimated %v", s.CostMicros, s.CostEstimated)
	}
	if st.Consumed.Counted != sumSteps(st) || st.Consumed.CostMicros < s.CostMicros || !st.Consumed.CostEstimated {
		t.Errorf("consumed %+v, steps count %d", st.Consumed, sumSteps(st))
	}
}

// cadence killed with SIGKILL while an implement session waits for its
// second turn, which the API started (message_start: its input tokens) and
// never finished: the next apply counts the session's tokens, the served
// turn's and the started turn's input, on the interrupted step and in the
// wave's totals, once (a third apply changes nothing).
func e2eKilledCountedOnResume(t *testing.T) {
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {
			commit("f.txt", "f").WithUsage(fakeapi.Usage{InputTokens: 500, OutputTokens: 50}),
			fakeapi.Stall().WithUsage(fakeapi.Usage{InputTokens: 700, OutputTokens: 70}),
		},
		"a-implement0~2": {commit("g.txt", "g"), writeDone("added g.txt")},
		"a-review0":      {review("conform")},
	}, waveOpts{})
	p, session := e.startUntilTurn("a-implement0", 2)
	// The second turn's message_start reaches the CLI, then the step's log.
	log := filepath.Join(e.dir, ".cadence", "w", "a", "0-implement.json")
	if !testutil.Eventually(60*time.Second, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), `"type":"message_start"`) >= 2
	}) {
		b, _ := os.ReadFile(log)
		p.signal(syscall.SIGKILL)
		<-p.done
		t.Fatalf("the second turn's start never reached %s:\n%s", log, b)
	}
	p.signal(syscall.SIGKILL)
	<-p.done // killed: wait would fail the test
	p.cancel()
	t.Logf("cadence killed:\n%s", indentLines(p.out.String()))
	if st := e.state(); len(st.Lots["a"].Steps) == 0 || st.Lots["a"].Steps[0].Status != state.StepRunning {
		t.Fatalf("after kill -9 the implement step is not recorded running: %s", steps(st.Lots["a"]))
	}

	r := e.apply()
	r.wantCode(t, 0)
	st := e.state()
	a := e.lot(st, "a")
	impl := stepsOf(a, state.StepImplement)
	if len(impl) < 1 || impl[0].SessionID != session || impl[0].Status != state.StepInterrupted {
		t.Fatalf("steps %s", steps(a))
	}
	want := state.Usage{Input: 500 + 700, Output: 50 + 1}
	if impl[0].Usage != want || impl[0].CostMicros <= 0 || !impl[0].CostEstimated {
		t.Errorf("killed session: usage %+v (want %+v), cost %d µ$ estimated %v", impl[0].Usage, want, impl[0].CostMicros, impl[0].CostEstimated)
	}
	if st.Consumed.Counted != sumSteps(st) || !st.Consumed.CostEstimated {
		t.Errorf("consumed %+v, steps count %d", st.Consumed, sumSteps(st))
	}
	before := st.Consumed
	e.apply()
	if after := e.state().Consumed; after != before {
		t.Errorf("a further apply changed the consumed totals: %+v, then %+v", before, after)
	}
}
