package codex

import (
	"context"
	"runtime"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/executor/agent"
)

// Codex CLI's sandbox (0.171.0) runs every shell command of a session
// under bubblewrap on Linux (it bundles one, codex-resources/bwrap): in
// workspace-write mode only the working folder and the writable roots
// cadence names (the worktree's and the common git dir) are writable; in
// read-only mode nothing is. Where bubblewrap cannot make its namespaces,
// the CLI's sandboxed commands fail rather than run unsandboxed.
//
// cadence promises the sandbox (plan, the checkout guard) only where a
// bwrap on PATH can make the namespaces Codex's asks for: the kernel's
// answer is the same for the bundled one. A machine with no bwrap on PATH
// is told the sandbox is missing, which is the cautious answer (the lead's
// checkout is then compared around every Codex step).

// sandboxChecks caches SandboxMissing's answers, by PATH.
type sandboxChecks struct {
	mu      sync.Mutex
	answers map[string]string
}

// SandboxMissing implements agent.Sandboxer: why Codex's sandbox cannot
// confine the commands of sessions started with env here, or "". Answers
// are cached per PATH for the life of the process.
func (a *Adapter) SandboxMissing(ctx context.Context, env []string) string {
	path := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	c := &a.checks
	c.mu.Lock()
	defer c.mu.Unlock()
	if ans, ok := c.answers[path]; ok {
		return ans
	}
	ans := agent.BwrapMissing(ctx, runtime.GOOS, path, "Codex CLI's sandbox")
	if ctx.Err() != nil {
		return ans // not cached: the probe was cut short
	}
	if c.answers == nil {
		c.answers = map[string]string{}
	}
	c.answers[path] = ans
	return ans
}

var _ agent.Sandboxer = (*Adapter)(nil)
