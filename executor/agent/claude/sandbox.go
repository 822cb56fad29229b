package claude

import (
	"context"
	"runtime"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/executor/agent"
)

// Claude Code's sandbox (its `sandbox` settings, 2.1.328) runs every Bash
// tool call under bubblewrap on Linux: the file system is read-only but
// for the working folder, the --add-dir folders, the repository's git dir
// when the working folder is a git worktree (its config, hooks and the
// other worktrees' git dirs stay read-only), the CLI's own temp folder
// (TMPDIR=/tmp/claude-<uid>) and a few folders of its own under $HOME
// (~/.npm/_logs; ~/.claude/… are in-memory). Network goes through the
// CLI's proxy (socat), which in -p mode refuses every host not allowed by
// the settings. Measured with the real CLI; see sandbox_test.go and
// cmd/cadence/e2e_sandbox_test.go.
//
// Without bwrap or socat the CLI warns and runs every command WITHOUT the
// sandbox, unless sandbox.failIfUnavailable is true: then it refuses to
// start ("Error: sandbox required but unavailable: …", exit 1). cadence
// checks first (SandboxMissing) and turns the sandbox on only where it
// works, with failIfUnavailable so that a sandbox promised is never
// silently dropped.

// sandboxChecks caches SandboxMissing's answers, by PATH.
type sandboxChecks struct {
	mu      sync.Mutex
	answers map[string]string
}

// SandboxMissing implements agent.Sandboxer: why Claude Code's sandbox
// cannot run the commands of sessions started with env here, or "". It
// needs Linux, bwrap and socat on env's PATH (what the CLI looks up), and
// a bwrap that can make its namespaces (bwrapProbe). Answers are cached
// per PATH for the life of the process.
func (a *Adapter) SandboxMissing(ctx context.Context, env []string) string {
	path := envValue(env, "PATH")
	c := &a.checks
	c.mu.Lock()
	defer c.mu.Unlock()
	if ans, ok := c.answers[path]; ok {
		return ans
	}
	ans := sandboxMissing(ctx, runtime.GOOS, path)
	if ctx.Err() != nil {
		return ans // not cached: the probe was cut short
	}
	if c.answers == nil {
		c.answers = map[string]string{}
	}
	c.answers[path] = ans
	return ans
}

// sandboxMissing is SandboxMissing's decision for system goos and the
// search path pathList: bubblewrap and socat (its network proxy), and
// namespaces bwrap can make.
func sandboxMissing(ctx context.Context, goos, pathList string) string {
	return agent.BwrapMissing(ctx, goos, pathList, "Claude Code's sandbox", "socat")
}

// lookPath finds an executable file named name in the folders of
// pathList (a PATH value), as the CLI does; "" when there is none.
func lookPath(name, pathList string) string { return agent.LookPath(name, pathList) }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
