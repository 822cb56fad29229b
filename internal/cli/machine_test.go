package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/spec"
)

// noSandbox is an adapter whose CLI has no sandbox.
type noSandbox struct{}

func (noSandbox) Run(context.Context, agent.Session, agent.Host) agent.Outcome {
	return agent.Outcome{}
}
func (noSandbox) Kind() string             { return "test-nosandbox" }
func (noSandbox) Tool() agent.Tool         { return agent.Tool{} }
func (noSandbox) KillLeftovers(string) int { return 0 }
func (noSandbox) Recount(string, string, string, []string) (agent.Spent, bool) {
	return agent.Spent{}, false
}

// TestAgentSandboxMissing: preflight learns from the agent's adapter why
// its sandbox cannot run here, with the PATH the sessions get.
func TestAgentSandboxMissing(t *testing.T) {
	empty := t.TempDir()
	m := machine{ctx: context.Background(), getenv: func(k string) string {
		if k == "PATH" {
			return empty
		}
		return ""
	}, agents: agent.NewRegistry(claude.New(), noSandbox{})}
	f := m.Agent(spec.DefaultAgent(spec.AgentKindClaude, "claude"))
	if !strings.Contains(f.SandboxMissing, "bubblewrap (bwrap) and socat not found on PATH") && !strings.HasPrefix(f.SandboxMissing, "not Linux") {
		t.Errorf("claude with an empty PATH: sandbox missing %q", f.SandboxMissing)
	}
	f = m.Agent(&spec.Agent{Name: "n", Kind: "test-nosandbox", Command: "n"})
	if f.SandboxMissing != `agent kind "test-nosandbox" has no sandbox` {
		t.Errorf("a kind without a sandbox: %q", f.SandboxMissing)
	}
}
