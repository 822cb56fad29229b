package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// BenchmarkAgentLatency measures the executor's own latency around agent
// sessions (issue 13, "the schedule"), with the in-process fake agent and
// fake git of the executor's tests (so no agent CLI and no git process:
// what is measured is cadence's scheduling, state writes and checks). The
// wave is a chain of agentChain agent lots in one repository whose test
// gate is `true`; each lot runs implement, its test gate, review and
// integrate. Metrics, p50 over every lot of every iteration:
//
//   - dep-to-session-p50-ms: from a lot's dependency recorded done (its
//     lot-end event) to the lot's first session started (the agent called);
//   - session-to-gate-p50-ms: from a write session's end (the agent
//     returned) to the lot's test gate started (its step-start event,
//     emitted after the step is recorded and just before its process is
//     started).
//
// The figures are in bench/README.md; no test asserts them.
func BenchmarkAgentLatency(b *testing.B) {
	const agentChain = 20
	var src strings.Builder
	src.WriteString("wave \"w\" {}\nrepo \"r\" {\n  path = \".\"\n  test = \"true\"\n}\n")
	for i := range agentChain {
		fmt.Fprintf(&src, "lot \"a%d\" {\n  repo = repo.r\n  brief = \"do a%d\"\n", i, i)
		if i > 0 {
			fmt.Fprintf(&src, "  depends_on = [lot.a%d]\n", i-1)
		}
		src.WriteString("}\n")
	}
	var depToSession, sessionToGate []float64
	for b.Loop() {
		b.StopTimer()
		h := newHarness(b, src.String())
		var mu sync.Mutex
		done := map[string]time.Time{}       // lot -> recorded done
		firstSession := map[string]time.Time{} // lot -> first session started
		gate := map[string]time.Time{}         // lot -> test gate started
		h.agent.script = func(s Session) (Outcome, time.Duration) {
			mu.Lock()
			if _, ok := firstSession[s.Lot]; !ok {
				firstSession[s.Lot] = time.Now()
			}
			mu.Unlock()
			r := &Report{Summary: "ok"}
			if s.ReadOnly {
				r = &Report{Verdict: "fine"}
			}
			return Outcome{Status: state.StepOK, Report: r}, 0
		}
		events := func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case e.Kind == EvLotEnd && e.Status == string(state.LotDone):
				done[e.Lot] = e.Time
			case e.Kind == EvStepStart && e.Step == state.StepTest:
				if _, ok := gate[e.Lot]; !ok {
					gate[e.Lot] = e.Time
				}
			}
		}
		b.StartTimer()
		res, err := h.runWith(context.Background(), planner.Options{}, func(o *Options) { o.Events = events })
		b.StopTimer()
		if err != nil || res.Lots[state.LotDone] != agentChain {
			b.Fatalf("run: %v %v", res, err)
		}
		ends := map[string]time.Time{} // lot -> its implement session's end
		for _, sp := range h.agent.spans {
			if sp.step == state.StepImplement {
				ends[sp.lot] = sp.end
			}
		}
		for i := range agentChain {
			lot := fmt.Sprintf("a%d", i)
			if i > 0 {
				depToSession = append(depToSession, ms(firstSession[lot].Sub(done[fmt.Sprintf("a%d", i-1)])))
			}
			sessionToGate = append(sessionToGate, ms(gate[lot].Sub(ends[lot])))
		}
		b.StartTimer()
	}
	b.ReportMetric(p50(depToSession), "dep-to-session-p50-ms")
	b.ReportMetric(p50(sessionToGate), "session-to-gate-p50-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// p50 is the median of xs (0 for none).
func p50(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
