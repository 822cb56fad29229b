//go:build linux

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/executor/agent/codex"
	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/fakeapi/openai"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// BenchmarkSessionOverhead runs, per iteration, one trivial implement
// session (one turn: the report) through each adapter, the Claude adapter
// with the real Claude Code CLI on the Messages fake and the Codex adapter
// with the real Codex CLI on the Responses fake, both in their sandboxes
// as cadence runs them, alternating which goes first. It reports the wall
// time per session of each (claude-ms/session, codex-ms/session) and their
// ratio (codex/claude); ns/op is one session of each. The figures are in
// bench/README.md, "Agent sessions".
//
//	go test ./cmd/cadence -run '^$' -bench SessionOverhead -benchtime 10x
func BenchmarkSessionOverhead(b *testing.B) {
	claudeCLI, codexCLI := fakeapi.FindCLI(b), openai.FindCLI(b)
	msgs, resp := fakeapi.Start(b, nil), openai.Start(b, nil)
	dir := filepath.Join(b.TempDir(), "app")
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Env = fakeapi.CLIEnv(b, msgs)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cs := claude.DefaultSettings()
	cs.MaxRetries = 0
	xs := codex.DefaultSettings()
	xs.Provider, xs.Retries, xs.Model = openai.Provider, 0, "gpt-5"
	type side struct {
		name    string
		adapter agent.Adapter
		agent   *spec.Agent
		host    agent.Host
		script  func(id string)
		took    time.Duration
	}
	sides := []*side{
		{name: "claude", adapter: claude.New(), agent: &spec.Agent{Name: claude.Kind, Kind: claude.Kind, Command: claudeCLI, Settings: cs},
			host: agent.Host{Command: claudeCLI, Env: fakeapi.CLIEnv(b, msgs)},
			script: func(id string) {
				msgs.SetScript(id, fakeapi.Script{fakeapi.StructuredOutput(map[string]any{"status": "done", "summary": "nothing to do"})})
			}},
		{name: "codex", adapter: codex.New(), agent: &spec.Agent{Name: codex.Kind, Kind: codex.Kind, Command: codexCLI, Settings: xs},
			host: agent.Host{Command: codexCLI, Env: openai.CLIEnv(b, resp)},
			script: func(id string) {
				resp.SetScript(id, openai.Script{openai.Report(map[string]any{"status": "done", "summary": "nothing to do"})})
			}},
	}
	logs := b.TempDir()
	run := func(s *side, i int) {
		id := executor.NewSessionID()
		s.script(id)
		sess := agent.Session{Wave: "bench", Lot: "a", WaveID: "w-bench", Step: state.StepImplement, Agent: s.agent,
			Dir: dir, Brief: "[[fake:" + id + "]] Report that there is nothing to do.", ReportSchema: state.StepImplement.ReportSchema(),
			SessionID: id, LogPrefix: filepath.Join(logs, s.name+"-"+id), LogLimit: 1 << 20}
		if s.name == "claude" {
			sess.Model = "sonnet"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		out := s.adapter.Run(ctx, sess, s.host)
		s.took += time.Since(start)
		if out.Status != state.StepOK {
			b.Fatalf("%s session %d: %s (%s)", s.name, i, out.Status, out.Cause)
		}
	}
	// One session of each first, untimed: the CLIs' first start reads
	// their binaries from disk.
	for _, s := range sides {
		run(s, -1)
		s.took = 0
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		first, second := sides[i%2], sides[1-i%2]
		run(first, i)
		run(second, i)
	}
	b.StopTimer()
	per := func(s *side) float64 { return float64(s.took.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(per(sides[0]), "claude-ms/session")
	b.ReportMetric(per(sides[1]), "codex-ms/session")
	b.ReportMetric(per(sides[1])/per(sides[0]), "codex/claude")
}
