package spec

import "time"

// Built-in defaults, used when neither a lot nor the defaults block sets a
// value. They are documented in docs/wave-file.md.
const (
	// DefaultMaxSessions is the agent session cap when the wave sets none.
	DefaultMaxSessions = 2
	// DefaultBase is a repo's base branch when it sets none.
	DefaultBase = "main"
	// DefaultModel is the model of write steps.
	DefaultModel = "sonnet"
	// DefaultReviewModel is the model of read-only steps.
	DefaultReviewModel = "opus"
	// DefaultFixPasses is the most fix passes after a non-conform review.
	DefaultFixPasses = 2
	// DefaultTimeout is the write-step timeout.
	DefaultTimeout = 45 * time.Minute
	// DefaultReviewTimeout is the read-only step timeout.
	DefaultReviewTimeout = 25 * time.Minute
	// DefaultAgentEstimate is an agent lot's estimate when none is written.
	DefaultAgentEstimate = time.Hour
	// DefaultCommandEstimate is a command lot's estimate when none is written.
	DefaultCommandEstimate = time.Minute
	// DefaultLogLimit is what a step's captured output keeps (a
	// command's, a test gate's or a setup's log): its first half and its
	// last half, with one line for what was dropped between.
	DefaultLogLimit Bytes = 4 << 20
	// MinLogLimit is the smallest log_limit accepted.
	MinLogLimit Bytes = 1 << 10
	// BuiltinAgent is the name of the built-in Claude Code agent.
	BuiltinAgent = "claude"
	// AgentKindClaude is the kind of the Claude Code CLI and CLIs that
	// behave like it: the kind of an agent block that sets none.
	AgentKindClaude = "claude"
)

// DefaultAgentKinds are the kinds an agent block may name when the caller
// passes none in Options.AgentKinds: the built-in agent's kind.
var DefaultAgentKinds = []string{AgentKindClaude}

// DefaultAgent returns a fresh agent of the given kind with the defaults an
// agent block of that kind starts from, named like the kind and running
// command (the kind's adapter's default, Options.AgentCommand; "" means
// the kind's name). Its settings are its adapter's to decode (nil here).
func DefaultAgent(kind, command string) *Agent {
	if command == "" {
		command = kind
	}
	return &Agent{Name: kind, Kind: kind, Command: command, Builtin: true}
}
