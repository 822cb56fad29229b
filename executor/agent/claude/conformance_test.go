//go:build linux

package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/agenttest"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/testagent"
	"github.com/cadence-run/cadence/spec"
)

// testAgentMark makes this test binary, started as an agent CLI, play the
// test agent (internal/testagent) instead of running the tests.
const testAgentMark = "CADENCE_CONFORMANCE_TESTAGENT=1"

func TestMain(m *testing.M) {
	if os.Getenv("CADENCE_CONFORMANCE_TESTAGENT") == "1" {
		os.Exit(testagent.Main())
	}
	os.Exit(m.Run())
}

// conformanceAgent is the agent the suite's sessions run with: the
// defaults, with no API retries of the CLI's own (a scripted 429 or 529
// ends the session at once).
func conformanceAgent(command string) *spec.Agent {
	s := DefaultSettings()
	s.MaxRetries = 0
	return &spec.Agent{Name: Kind, Kind: Kind, Command: command, Settings: s}
}

// TestConformanceTestAgent runs the adapter conformance suite against the
// Claude adapter driving the test agent, a scripted stand-in for the CLI.
func TestConformanceTestAgent(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reset := time.Now().Add(42 * time.Minute).Truncate(time.Second)
	agenttest.Run(t, agenttest.Harness{
		Adapter: New(),
		Agent:   conformanceAgent(self),
		Host:    agent.Host{Command: self, Env: append(gittest.Env(), testAgentMark)},
		ResetAt: reset,
		Script: func(t *testing.T, b agenttest.Behaviour, s *agent.Session) {
			var a testagent.Action
			switch b {
			case agenttest.Commit:
				a = testagent.Action{Commit: true, Tokens: 1000}
			case agenttest.Ask:
				a = testagent.Action{Questions: []string{"Which way?"}, Tokens: 100}
			case agenttest.NoReport:
				a = testagent.Action{NoReport: true, Tokens: 100}
			case agenttest.UsageLimit:
				a = testagent.Action{Quota: true, ResetAt: reset.Unix()}
			case agenttest.Overloaded:
				a = testagent.Action{Fail: "API Error: 529 Overloaded. This is a server-side issue, usually temporary", APIStatus: 529}
			case agenttest.Hang:
				a = testagent.Action{Hang: true}
			case agenttest.Chatty:
				a = testagent.Action{EchoBrief: true, Tokens: 100}
				s.Brief = strings.Repeat("Say this again. ", 2000)
			default:
				t.Fatalf("the test agent cannot play %s", b)
			}
			dir := t.TempDir()
			script, _ := json.Marshal(testagent.Script{"default": a})
			if err := os.WriteFile(filepath.Join(dir, "script.json"), script, 0o644); err != nil {
				t.Fatal(err)
			}
			s.Env = append(s.Env, "FAKE_AGENT_SCRIPT="+filepath.Join(dir, "script.json"), "FAKE_AGENT_LOG="+filepath.Join(dir, "log"))
		},
		Runs: func(t *testing.T, s agent.Session) int {
			for _, e := range s.Env {
				if p, ok := strings.CutPrefix(e, "FAKE_AGENT_LOG="); ok {
					b, _ := os.ReadFile(p)
					return strings.Count(string(b), "start ")
				}
			}
			return 0
		},
		Lacks: map[agenttest.Behaviour]string{
			agenttest.WriteFile: "the test agent has no tools and no permissions to refuse them",
		},
	})
}

// TestConformanceRealCLI runs the adapter conformance suite against the
// Claude adapter driving the real Claude Code CLI (fakeapi.FindCLI) on the
// fake API, in its sandbox where this machine has one.
func TestConformanceRealCLI(t *testing.T) {
	cli := fakeapi.FindCLI(t)
	srv := fakeapi.Start(t, nil)
	reset := time.Now().Add(42 * time.Minute).Truncate(time.Second)
	done := func(v map[string]any) fakeapi.Turn { return fakeapi.StructuredOutput(v) }
	agenttest.Run(t, agenttest.Harness{
		Adapter: New(),
		Agent:   conformanceAgent(cli),
		Host:    agent.Host{Command: cli, Env: fakeapi.CLIEnv(t, srv)},
		ResetAt: reset,
		Script: func(t *testing.T, b agenttest.Behaviour, s *agent.Session) {
			var sc fakeapi.Script
			switch b {
			case agenttest.Commit:
				sc = fakeapi.Script{fakeapi.Bash("echo c > c.txt && git add c.txt && git commit -q -m 'add c.txt'"),
					done(map[string]any{"status": "done", "summary": "added c.txt"})}
			case agenttest.Ask:
				sc = fakeapi.Script{done(map[string]any{"status": "done", "summary": "asked", "questions": []string{"Which way?"}})}
			case agenttest.NoReport:
				sc = fakeapi.Script{fakeapi.Text("done, and no report")}
			case agenttest.UsageLimit:
				limited := fakeapi.HTTPError(429, "rate_limit_error", "Claude AI usage limit reached|"+strconv.FormatInt(reset.Unix(), 10))
				limited.Repeat = true
				sc = fakeapi.Script{limited}
			case agenttest.Overloaded:
				o := fakeapi.Overloaded()
				o.Repeat = true
				sc = fakeapi.Script{o}
			case agenttest.Hang:
				sc = fakeapi.Script{fakeapi.Hang()}
			case agenttest.Chatty:
				sc = fakeapi.Script{fakeapi.Blocks(fakeapi.TextBlock(strings.Repeat("Say this again. ", 2000)),
					fakeapi.ToolBlock("StructuredOutput", map[string]any{"status": "done", "summary": "said it"}))}
			case agenttest.WriteFile:
				sc = fakeapi.Script{fakeapi.Write(filepath.Join(s.Dir, agenttest.Written), "x\n"),
					done(map[string]any{"verdict": "conform", "findings": []any{}})}
			}
			marker := s.SessionID
			srv.SetScript(marker, sc)
			s.Brief = "[[fake:" + marker + "]] " + s.Brief
		},
		// Each run of the CLI after the first resumes the session with one
		// more prompt of its own: the formatting retry's, which the history
		// every later request sends holds once per retry.
		Runs: func(t *testing.T, s agent.Session) int {
			retries := 0
			for _, r := range srv.RequestsFor(s.SessionID) {
				retries = max(retries, strings.Count(string(r.Body), FormatRetryPrompt))
			}
			return 1 + retries
		},
	})
}
