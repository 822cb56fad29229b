package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// machine gathers preflight facts with git and the agent CLI.
type machine struct {
	ctx    context.Context
	getenv func(string) string
	// wave is the wave being planned: its own repository locks (an apply
	// of it running now) are not "another wave".
	wave string
}

// Repo implements planner.Machine.
func (m machine) Repo(r *spec.Repo) planner.RepoFacts {
	f, err := gitint.Inspect(m.ctx, r.Path, r.Base)
	out := planner.RepoFacts{Err: err, Exists: f.Exists, IsGit: f.IsGit, BaseSHA: f.BaseSHA, Dirty: f.Dirty, ForeignPrePush: f.ForeignPrePush}
	if f.Exists {
		out.ProbableTest = planner.ProbableTestCommand(os.DirFS(r.Path))
	}
	if f.CommonDir != "" {
		if h := lockHolder(layout.RepoLock(f.CommonDir)); h != nil && h.Wave != m.wave {
			out.HeldBy = fmt.Sprintf("wave %q (pid %d, since %s)", h.Wave, h.PID, h.Since.Local().Format(time.TimeOnly))
		}
	}
	return out
}

// agentCommand is the command that runs an agent: CADENCE_CLAUDE_BIN, when
// set, overrides the claude agent's command (built in or declared).
func agentCommand(a *spec.Agent, getenv func(string) string) string {
	if bin := getenv("CADENCE_CLAUDE_BIN"); bin != "" && a.Name == spec.BuiltinAgent {
		return bin
	}
	return a.Command
}

// Agent implements planner.Machine: it finds the command and asks its
// version, bounded to a few seconds.
func (m machine) Agent(a *spec.Agent) planner.AgentFacts {
	f := planner.AgentFacts{Command: agentCommand(a, m.getenv)}
	path, err := exec.LookPath(f.Command)
	if err != nil {
		return f
	}
	f.Path = path
	f.Version, f.Err = agentVersion(m.ctx, path)
	return f
}

// agentVersion runs `CMD --version` in its own process group with a timeout.
func agentVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = os.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
