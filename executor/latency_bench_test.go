package executor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// BenchmarkAgentLatency measures the executor's own latency around agent
// sessions, with the in-process fake agent and
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
		done := map[string]time.Time{}         // lot -> recorded done
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

// BenchmarkCommandLots runs waves of 200 command lots `true` without a
// repository at 2 jobs, supervised as cadence runs them, in each shape
// (wide: independent; chain: each after the last): for a CPU profile of
// the per-lot cost (-cpuprofile) next to bench/'s wall-time comparison
// with ninja. Metric: ms-per-lot (wall).
func BenchmarkCommandLots(b *testing.B) {
	const n = 200
	for _, shape := range []string{"wide", "chain"} {
		b.Run(shape, func(b *testing.B) {
			var src strings.Builder
			src.WriteString("wave \"w\" {}\n")
			for i := range n {
				fmt.Fprintf(&src, "lot \"L%d\" {\n  run = \"true\"\n", i)
				if shape == "chain" && i > 0 {
					fmt.Fprintf(&src, "  depends_on = [lot.L%d]\n", i-1)
				}
				src.WriteString("}\n")
			}
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				h := newHarness(b, src.String())
				useSupervisor(b, h)
				b.StartTimer()
				start := time.Now()
				res, err := h.run(context.Background(), planner.Options{Jobs: 2})
				total += time.Since(start)
				if err != nil || res.Lots[state.LotDone] != n {
					b.Fatalf("run: %v %v", res, err)
				}
			}
			b.ReportMetric(ms(total)/float64(b.N*n), "ms-per-lot")
		})
	}
}

// BenchmarkAgentLatencyGit is BenchmarkAgentLatency with cadence's real git
// (gitint) in a real repository: the fake agent commits with git in the
// lot's worktree, and the lot's worktree, guard checks, rebase and
// fast-forward are git's. The two metrics then include what git costs
// between the two moments (a dependent's worktree is made before its first
// session; a session's checks read the worktree's status and refs).
func BenchmarkAgentLatencyGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	const agentChain = 8
	var src strings.Builder
	src.WriteString("wave \"w\" {}\nrepo \"r\" {\n  path = \"repo\"\n  test = \"true\"\n}\n")
	for i := range agentChain {
		fmt.Fprintf(&src, "lot \"a%d\" {\n  repo = repo.r\n  brief = \"do a%d\"\n", i, i)
		if i > 0 {
			fmt.Fprintf(&src, "  depends_on = [lot.a%d]\n", i-1)
		}
		src.WriteString("}\n")
	}
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	var depToSession, sessionToGate []float64
	for b.Loop() {
		b.StopTimer()
		h := newHarness(b, src.String())
		repo := filepath.Join(h.dir, "repo")
		os.MkdirAll(repo, 0o755)
		git(repo, "init", "-q", "-b", "main")
		os.WriteFile(filepath.Join(repo, "README"), []byte("x\n"), 0o644)
		git(repo, "add", "README")
		git(repo, "commit", "-qm", "init")
		remove, err := gitint.NewGit(gittest.Env()).InstallGuard(context.Background(), repo) // as Apply does
		if err != nil {
			b.Fatal(err)
		}
		var mu sync.Mutex
		done := map[string]time.Time{}
		firstSession := map[string]time.Time{}
		gate := map[string]time.Time{}
		ends := map[string]time.Time{}
		h.agent.noCommit = func(Session) bool { return true }
		h.agent.script = func(s Session) (Outcome, time.Duration) {
			mu.Lock()
			if _, ok := firstSession[s.Lot]; !ok {
				firstSession[s.Lot] = time.Now()
			}
			mu.Unlock()
			if s.ReadOnly {
				return Outcome{Status: state.StepOK, Report: &Report{Verdict: "fine"}}, 0
			}
			os.WriteFile(filepath.Join(s.Dir, s.Lot+".txt"), []byte(s.Lot+"\n"), 0o644)
			git(s.Dir, "add", s.Lot+".txt")
			git(s.Dir, "commit", "-qm", s.Lot+": work ("+s.Lot+")")
			mu.Lock()
			ends[s.Lot] = time.Now() // the session's last act; it returns at once
			mu.Unlock()
			return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}, 0
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
		res, err := h.runWith(context.Background(), planner.Options{}, func(o *Options) {
			o.Events, o.Git = events, gitint.NewRepos(gittest.Env())
		})
		b.StopTimer()
		if rerr := remove(); rerr != nil {
			b.Fatal(rerr)
		}
		if err != nil || res.Lots[state.LotDone] != agentChain {
			a0 := h.lots()["a0"]
			b.Fatalf("run: %v %v; a0: %s %s %+v", res, err, a0.Status, a0.Cause, a0.Steps)
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
