package agent

import (
	"context"
	"fmt"
)

// Sandboxer is an Adapter whose CLI can run a session's commands in an OS
// sandbox of its own (Claude Code's bubblewrap sandbox), so that what the
// agent runs can write only to the lot's worktrees and their git dirs
// (docs/integration.md, Guards: pushes are then prevented, not only detected). An
// adapter uses the sandbox for every session whose agent does not turn it
// off (spec.Agent.NoSandbox) and for which SandboxMissing says "".
type Sandboxer interface {
	// SandboxMissing says why the sandbox cannot be used on this machine
	// by sessions that run with env (their PATH finds the sandbox's
	// programs), or "" when it can: "not Linux", "bubblewrap (bwrap) not
	// found on PATH", "bubblewrap cannot start a sandbox here: …". The
	// answer may be cached per PATH; it never fails otherwise.
	SandboxMissing(ctx context.Context, env []string) string
}

// SandboxMissing returns why the sandbox of a's kind cannot be used with
// env on this machine ("" when it can): the adapter's answer when it is a
// Sandboxer, else that the kind has none. kind names the kind in that
// message.
func SandboxMissing(ctx context.Context, a Adapter, kind string, env []string) string {
	if s, ok := a.(Sandboxer); ok {
		return s.SandboxMissing(ctx, env)
	}
	return fmt.Sprintf("agent kind %q has no sandbox", kind)
}
