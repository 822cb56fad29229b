package spec

import "time"

// Built-in defaults, used when neither a lot nor the defaults block sets a
// value. They are documented in the README's language reference.
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
	// DefaultAgentMaxRetries bounds the agent CLI's own API retries
	// (CLAUDE_CODE_MAX_RETRIES): its default of 10 turns a dead API into a
	// wait of about three minutes.
	DefaultAgentMaxRetries = 3
	// BuiltinAgent is the name of the built-in Claude Code agent.
	BuiltinAgent = "claude"
)

// PermissionModes are the values Claude Code accepts for --permission-mode.
var PermissionModes = []string{"default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"}

// builtinClaude returns a fresh copy of the built-in Claude Code agent. Its
// permissions let an agent edit, test and commit unattended without
// bypassPermissions: acceptEdits plus the whole Bash tool (Bash prefix rules
// refuse redirections and compound commands), with pushes and sub-agents
// denied. The push denial is a soft guard; gitint enforces the real one.
func builtinClaude() *Agent {
	return &Agent{
		Name:            BuiltinAgent,
		Command:         "claude",
		PermissionMode:  "acceptEdits",
		AllowedTools:    []string{"Bash", "Edit", "Write"},
		DisallowedTools: []string{"Agent", "Bash(git push:*)"},
		MaxRetries:      DefaultAgentMaxRetries,
		Builtin:         true,
	}
}
