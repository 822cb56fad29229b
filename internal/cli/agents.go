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
// folders its sandboxed sessions use).
func newAgents() *agent.Registry {
	return agent.NewRegistry(claude.New(), codex.New())
}

// agents returns the command's registry of agent adapters, made on first
// use (an env built by a test sets none).
func (e *env) agents() *agent.Registry {
	if e.agentRegistry == nil {
		e.agentRegistry = newAgents()
	}
	return e.agentRegistry
}
