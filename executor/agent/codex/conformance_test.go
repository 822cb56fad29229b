//go:build linux

package codex

import (
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/agenttest"
	"github.com/cadence-run/cadence/internal/fakeapi/openai"
	"github.com/cadence-run/cadence/spec"
)

// conformanceAgent is the agent the suite's sessions run with: the fake's
// provider, no API retries of the CLI's own (a scripted 429 or failure
// ends the session at once), a price for every model.
func conformanceAgent(command string) *spec.Agent {
	s := DefaultSettings()
	s.Provider, s.Retries, s.Model = openai.Provider, 0, "gpt-5"
	s.Prices = map[string]Prices{"*": {Input: 1.25, Cached: 0.125, Output: 10}}
	return &spec.Agent{Name: Kind, Kind: Kind, Command: command, Settings: s}
}

// TestConformanceRealCLI runs the adapter conformance suite against the
// Codex adapter driving the real Codex CLI (openai.FindCLI) on the fake
// Responses API, in Codex's own sandbox.
func TestConformanceRealCLI(t *testing.T) {
	cli := openai.FindCLI(t)
	srv := openai.Start(t, nil)
	reset := time.Now().Add(42 * time.Minute).Truncate(time.Second)
	agenttest.Run(t, agenttest.Harness{
		Adapter: New(),
		Agent:   conformanceAgent(cli),
		Host:    agent.Host{Command: cli, Env: openai.CLIEnv(t, srv)},
		ResetAt: reset,
		Script: func(t *testing.T, b agenttest.Behaviour, s *agent.Session) {
			var sc openai.Script
			switch b {
			case agenttest.Commit:
				sc = openai.Script{openai.Exec("echo c > c.txt && git add c.txt && git commit -q -m 'add c.txt'"),
					openai.Report(map[string]any{"status": "done", "summary": "added c.txt", "tests": nil, "questions": nil, "choices": nil})}
			case agenttest.Ask:
				sc = openai.Script{openai.Report(map[string]any{"status": "done", "summary": "asked", "questions": []string{"Which way?"}})}
			case agenttest.NoReport:
				sc = openai.Script{openai.Message("done, and no report")}
			case agenttest.UsageLimit:
				sc = openai.Script{openai.UsageLimit(reset).Forever()}
			case agenttest.Overloaded:
				sc = openai.Script{openai.Overloaded().Forever()}
			case agenttest.Hang:
				sc = openai.Script{openai.Hang()}
			case agenttest.Chatty:
				sc = openai.Script{{Items: []openai.Item{{Text: strings.Repeat("Say this again. ", 2000)},
					{Text: `{"status":"done","summary":"said it"}`}}}}
			case agenttest.WriteFile:
				sc = openai.Script{openai.Exec("echo x > " + agenttest.Written),
					openai.Report(map[string]any{"verdict": "conform", "findings": []any{}})}
			}
			marker := s.SessionID
			srv.SetScript(marker, sc)
			s.Brief = "[[fake:" + marker + "]] " + s.Brief
		},
		// Each run after the first resumes the thread with the formatting
		// retry's prompt, which every later request's history holds.
		Runs: func(t *testing.T, s agent.Session) int {
			retries := 0
			for _, r := range srv.RequestsFor(s.SessionID) {
				retries = max(retries, strings.Count(string(r.Body), FormatRetryPrompt))
			}
			return 1 + retries
		},
	})
}
