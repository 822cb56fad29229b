package claude

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
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

// bwrapProbe is the sandbox cadence tries before it promises one: the
// namespaces Claude Code's own bubblewrap command line asks for (a user,
// PID and network namespace, a fresh /proc), around `true`. It catches
// kernels or containers without unprivileged user namespaces. It costs
// about 45 ms (2 cores, Linux 6.18), once per PATH and process.
var bwrapProbe = []string{"--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid",
	"--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"}

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
// search path pathList.
func sandboxMissing(ctx context.Context, goos, pathList string) string {
	if goos != "linux" {
		return "not Linux (cadence uses Claude Code's sandbox on Linux, with bubblewrap)"
	}
	var missing []string
	bwrap := lookPath("bwrap", pathList)
	if bwrap == "" {
		missing = append(missing, "bubblewrap (bwrap)")
	}
	if lookPath("socat", pathList) == "" {
		missing = append(missing, "socat")
	}
	if len(missing) > 0 {
		return strings.Join(missing, " and ") + " not found on PATH (Debian/Ubuntu: apt-get install bubblewrap socat)"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	res, err := proc.Run(ctx, proc.Cmd{Path: bwrap, Args: bwrapProbe, Env: []string{"PATH=" + pathList},
		Stdout: &out, Stderr: &out, Grace: time.Second, Direct: true})
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	case res.Stopped:
		why = "it did not answer within 10s"
	case res.ExitCode != 0:
		why = firstLine(out.String())
		if why == "" {
			why = "exit status " + itoa(res.ExitCode)
		}
	default:
		return ""
	}
	return "bubblewrap cannot start a sandbox here (" + why + "); unprivileged user namespaces may be off"
}

// lookPath finds an executable file named name in the folders of
// pathList (a PATH value), as the CLI does; "" when there is none.
func lookPath(name, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
