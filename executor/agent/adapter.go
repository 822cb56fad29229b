package agent

import (
	"context"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
)

// Adapter runs the sessions of one kind of agent CLI. An adapter is shared
// by all sessions of a process and must be safe for concurrent use.
type Adapter interface {
	// Kind is the agent kind the adapter serves: the kind attribute of the
	// agent blocks whose sessions it runs ("claude").
	Kind() string
	// Run runs one session to its end, with the retries the design allows
	// (docs/running.md) and no others, and says how it ended. It does not
	// return an error: a session that cannot start is an Outcome with
	// status failed and the reason as its cause. When ctx ends, the session
	// is stopped (SIGTERM, then SIGKILL after Host.Grace) and the outcome
	// is interrupted.
	Run(ctx context.Context, s Session, h Host) Outcome
	// Tool describes the CLI, for preflight and `cadence version`.
	Tool() Tool
	// KillLeftovers kills the processes a session left running after its
	// process group was taken down, found by their SessionMark, and
	// returns how many it killed. Run calls it at the end of every
	// session; callers that find a session's processes after a crash may
	// too.
	KillLeftovers(sessionID string) int
	// Recount counts what a session cost that was stopped with the cadence
	// that ran it (killed with -9: no outcome was recorded), from what the
	// session left: its log files (logPrefix, as Session.LogPrefix) and the
	// CLI's own records of session sessionID run in folder dir, found with
	// env (the user's environment, Host.Env). Call it once the session's
	// processes are gone. It reports false when nothing was found.
	Recount(sessionID, dir, logPrefix string, env []string) (Spent, bool)
}

// Host is what the caller gives every session of a run, whatever the
// adapter.
type Host struct {
	// Env is the environment sessions start from (the user's); the
	// session's own entries (Session.Env, MarkEnv) come after it.
	Env []string
	// Command is the executable to run, already resolved (see Command).
	Command string
	// Grace is the time between SIGTERM and SIGKILL when a session is
	// stopped (0: internal/proc's default).
	Grace time.Duration
	// Supervisor is what every session's process tree runs under
	// (proc.Cmd.Supervisor; nil: none, the session runs directly).
	Supervisor *proc.Supervisor
	// NewSessionID makes the id of a relaunched session (nil: no relaunch).
	NewSessionID func() string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Clock returns h.Now, or time.Now when it is nil.
func (h Host) Clock() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Tool is what preflight and `cadence version` need of a CLI: how to find
// it, how to ask its version, which version is old, and how to get it.
type Tool struct {
	// Command is the executable an agent of the kind runs when its block
	// sets no command, found on PATH ("claude"); "" means the kind's name
	// (Registry.DefaultCommand, which spec.Options.AgentCommand is).
	Command string
	// EnvOverride names the environment variable that, when set, replaces
	// the executable of the kind's own agent (the one named like the kind,
	// built in or declared): "CADENCE_CLAUDE_BIN". "" for none.
	EnvOverride string
	// VersionArgs make the CLI print its version: ["--version"].
	VersionArgs []string
	// MinVersion is the oldest version the adapter drives, as dotted
	// numbers ("2.1.0"); "" for no minimum.
	MinVersion string
	// Install says how to get the CLI, for the message when it is
	// missing: "install Claude Code: npm install -g ...".
	Install string
}
