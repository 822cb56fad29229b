package cli

import (
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/claude"
)

// The agent kinds cadence runs, one registration line per adapter (see the
// executor/agent package doc for what else a new kind touches). The kinds
// registered here are the ones an agent block may name (loadWave passes
// agent.Kinds() to spec).
func init() {
	agent.Register(claude.Kind, claude.New())
}
