package cli

import (
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/executor/agent/codex"
)

// newAgents returns the registry of the agent kinds cadence runs, one
// adapter per kind (see the executor/agent package doc for what else a new
// kind touches). Its kinds are the ones an agent block may name (loadWave
// passes Kinds to spec). One registry serves a whole command: an adapter
// keeps what its sessions share (Claude Code's sandbox checks and the
// folders its sandboxed sessions use). browser is where the browser of
// UX sessions is (browserSetup).
func newAgents(browser agent.BrowserSetup) *agent.Registry {
	return agent.NewRegistry(claude.New().WithBrowser(browser), codex.New())
}

// The environment variables that say where the browser of UX sessions is
// (docs/agents.md, The browser of a UX session): the Playwright MCP
// server's executable and chromium's; unset, they are looked up on PATH
// (agent.DefaultBrowserServer, agent.DefaultChromium).
const (
	browserServerEnv = "CADENCE_PLAYWRIGHT_MCP"
	chromiumEnv      = "CADENCE_CHROMIUM"
)

// browserSetup is the browser of UX sessions as the environment sets it.
func (e *env) browserSetup() agent.BrowserSetup {
	return agent.BrowserSetup{Server: e.getenv(browserServerEnv), Chromium: e.getenv(chromiumEnv)}
}

// agents returns the command's registry of agent adapters, made on first
// use (an env built by a test sets none).
func (e *env) agents() *agent.Registry {
	if e.agentRegistry == nil {
		e.agentRegistry = newAgents(e.browserSetup())
	}
	return e.agentRegistry
}
