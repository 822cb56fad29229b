package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/proc"
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

// agentCommand is the command that runs an agent: its adapter's override
// (CADENCE_CLAUDE_BIN for the claude agent, built in or declared), when
// set, else its command (agent.Command).
func agentCommand(a *spec.Agent, getenv func(string) string) string {
	return agent.Command(a, getenv)
}

// Agent implements planner.Machine: it finds the command and asks its
// version, bounded to a few seconds, and passes on what the agent's
// adapter requires (minimum version, install hint) and why its sandbox
// cannot be used here (agent.SandboxMissing, with this PATH: the one the
// sessions get), whether or not the agent turns it off.
func (m machine) Agent(a *spec.Agent) planner.AgentFacts {
	f := planner.AgentFacts{Command: agentCommand(a, m.getenv)}
	ad, ok := agent.Lookup(a.Kind)
	if !ok {
		f.Err = fmt.Errorf("no adapter for agent kind %q", a.Kind)
		return f
	}
	tool := ad.Tool()
	f.VersionArgs, f.MinVersion, f.Install = strings.Join(tool.VersionArgs, " "), tool.MinVersion, tool.Install
	f.SandboxMissing = agent.SandboxMissing(m.ctx, ad, a.Kind, []string{"PATH=" + m.getenv("PATH")})
	path, err := exec.LookPath(f.Command)
	if err != nil {
		return f
	}
	f.Path = path
	f.Version, f.Err = agentVersion(m.ctx, path, tool.VersionArgs)
	return f
}

// agentVersion runs `CMD ARGS` (the adapter's version probe) with internal/proc (own process group,
// cadence's environment), bounded to ten seconds. A failure reads as exec's
// did: "exit status N", or "signal: NAME" when it was stopped.
func agentVersion(ctx context.Context, path string, args []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var stdout bytes.Buffer
	res, err := proc.Run(ctx, proc.Cmd{Path: path, Args: args, Env: os.Environ(),
		Stdout: &stdout, Grace: time.Second})
	out := strings.TrimSpace(stdout.String())
	switch {
	case err != nil:
		return out, err
	case res.Signal != 0:
		return out, fmt.Errorf("signal: %v", res.Signal)
	case res.ExitCode != 0:
		return out, fmt.Errorf("exit status %d", res.ExitCode)
	case res.Stopped:
		return out, fmt.Errorf("%s %s: %w", path, strings.Join(args, " "), ctx.Err())
	}
	return out, nil
}
