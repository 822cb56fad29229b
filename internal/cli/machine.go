package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/slots"
	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/cadence-run/cadence/internal/toolchain"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// machine gathers preflight facts with git and the agent CLI.
type machine struct {
	ctx    context.Context
	getenv func(string) string
	// git runs the git calls of the facts.
	git gitint.Git
	// wave is the name of the wave being planned and file its wave file
	// (absolute): its own repository locks (an apply of it running now)
	// are not "another wave" (own).
	wave, file string
	// lockTimeout is how long a repository lock held by another wave is
	// waited for before it is reported held (apply -lock-timeout; 0: not
	// waited for); onHeld says once what is waited for.
	lockTimeout time.Duration
	onHeld      func(what string) func(*flock.HeldError)
	// slotsDir is the machine's slot folder, where the holds are.
	slotsDir string
	// supervisor is what the agent and toolchain probes run under.
	supervisor *proc.Supervisor
	// agents are the adapters of the agent kinds.
	agents *agent.Registry
}

// machine is the preflight of the wave named wave, of the wave file file,
// on this machine, waiting for held repository locks as apply
// -lock-timeout says.
func (e *env) machine(wave, file string) machine {
	if a, err := filepath.Abs(file); err == nil {
		file = a
	}
	return machine{ctx: context.Background(), getenv: e.getenv, git: gitint.NewGit(os.Environ()), wave: wave, file: file, lockTimeout: e.lockTimeout, onHeld: e.waitingFor, supervisor: e.supervisor,
		slotsDir: e.layoutOf("", "").SlotsDir(), agents: e.agents()}
}

// LiveHolds implements planner.HoldsMachine: the live holds of the
// machine's slot folder (cadence hold); 0 when they cannot be read.
func (m machine) LiveHolds() int {
	n, _ := slots.LiveHolds(m.slotsDir, time.Now())
	return n
}

// StepSandboxMissing implements planner.StepSandboxMachine: why the step
// sandbox cannot run with this PATH (the one steps get), "" when it can
// (box.Prober: bubblewrap found and able to make the box).
func (m machine) StepSandboxMissing() string {
	_, missing := new(box.Prober).Probe(m.ctx, m.getenv("PATH"))
	return missing
}

// BrowserMissing implements planner.BrowserMachine: why a UX session of a
// would get no browser with this PATH (agent.BrowserMissing, its adapter's
// answer); "" when it would, or when a's kind has no adapter (the plan
// refuses it otherwise).
func (m machine) BrowserMissing(a *spec.Agent) string {
	ad, ok := m.agents.Lookup(a.Kind)
	if !ok {
		return ""
	}
	return agent.BrowserMissing(m.ctx, ad, a.Kind, []string{"PATH=" + m.getenv("PATH")})
}

// Limits implements planner.LimitsMachine: how this machine enforces the
// step limits l sets (proc.Enforced).
func (m machine) Limits(l proc.Limits) []proc.Enforcement {
	if l.IsZero() {
		return nil
	}
	return proc.Enforced(l)
}

// waitingFor returns the note said once on stderr when apply waits for a
// held lock (what: "the wave lock", "repo app's lock"), naming its holder.
func (e *env) waitingFor(what string) func(*flock.HeldError) {
	return func(he *flock.HeldError) {
		fmt.Fprintf(e.stderr, "cadence apply: waiting up to %s for %s: %v\n", e.lockTimeout, what, he)
	}
}

// Repo implements planner.Machine.
func (m machine) Repo(r *spec.Repo) planner.RepoFacts {
	f, err := m.git.Inspect(m.ctx, r.Path, r.Base)
	out := planner.RepoFacts{Err: err, Exists: f.Exists, IsGit: f.IsGit, BaseSHA: f.BaseSHA, Dirty: f.Dirty, ForeignPrePush: f.ForeignPrePush}
	if f.BaseSHA != "" {
		out.Gitmodules = m.git.BaseHasGitmodules(m.ctx, r.Path, r.Base)
	}
	if f.IsGit && err == nil {
		out.Branches, err = m.git.LotBranches(m.ctx, r.Path)
		if err != nil {
			out.Err = err
		}
	}
	if f.Exists {
		out.ProbableTest = planner.ProbableTestCommand(os.DirFS(r.Path))
		tc, err := toolchain.Repo(r.Path, toolchain.Options{NVMDir: m.getenv("NVM_DIR"), Home: m.getenv("HOME"),
			Mise: m.mise(), Path: m.getenv("PATH")})
		out.ToolchainErr = err
		if tc != nil {
			out.Toolchain, out.ToolchainPath, out.ToolchainEnv = tc.String(), tc.Path, tc.Env
		}
		if drift := m.toolchainDrift(r, f.IsGit && f.BaseSHA != ""); drift != "" && err == nil {
			out.ToolchainErr = errors.New(drift)
			out.Toolchain, out.ToolchainPath, out.ToolchainEnv = "", nil, nil
		}
	}
	if f.CommonDir != "" {
		path := layout.RepoLock(f.CommonDir)
		if h := lockHolder(path); h != nil && !m.own(h) {
			waited := ""
			if m.lockTimeout > 0 {
				h, waited = m.waitRepo(r.Name, path)
			}
			if h != nil {
				out.HeldBy = fmt.Sprintf("wave %q (pid %d, since %s)%s", h.Wave, h.PID, h.Since.Local().Format(time.TimeOnly), waited)
			}
		}
	}
	return out
}

// own reports whether the holder h of a repository lock is the wave being
// planned: its name, and its wave file when h names one by its absolute
// path (executor.Apply's holder does); a wave of that name in another
// folder is another wave.
func (m machine) own(h *flock.Holder) bool {
	if h.Wave != m.wave {
		return false
	}
	return h.File == "" || !filepath.IsAbs(h.File) || filepath.Clean(h.File) == filepath.Clean(m.file)
}

// CheckCopy implements planner.CopyMachine (gitint.CheckCopy).
func (m machine) CheckCopy(r *spec.Repo, copies []string) ([]planner.CopyProblem, error) {
	problems, err := m.git.CheckCopy(m.ctx, r.Path, r.Base, copies)
	out := make([]planner.CopyProblem, len(problems))
	for i, p := range problems {
		out[i] = planner.CopyProblem{Path: p.Path, Problem: p.Problem}
	}
	return out, err
}

// waitRepo waits up to lockTimeout for the repository lock at path to be
// free, and gives it back at once (the run takes it, waiting again if
// another wave took it meanwhile: waitingHost). It returns nil when the
// lock came free, else its holder and a note of the wait.
func (m machine) waitRepo(name, path string) (*flock.Holder, string) {
	l, err := flock.AcquireTimeout(m.ctx, path, flock.Holder{Wave: m.wave, What: "preflight of repo " + name}, m.lockTimeout, m.onHeld("repo "+name+"'s lock"))
	if err == nil {
		_ = l.Release()
		return nil, ""
	}
	var he *flock.HeldError
	if errors.As(err, &he) {
		return &he.Holder, fmt.Sprintf("; still held after waiting %s", he.Waited)
	}
	return &flock.Holder{Wave: "unknown"}, fmt.Sprintf("; waiting for it failed: %v", err)
}

// waitingHost is the executor's SystemHost whose repository locks wait up
// to apply -lock-timeout for another wave to let go (SystemHost refuses at
// once). ctx is the run's: the first signal ends the wait.
type waitingHost struct {
	executor.SystemHost
	ctx     context.Context
	timeout time.Duration
	onHeld  func(what string) func(*flock.HeldError)
}

// LockRepo implements executor.Host.
func (h waitingHost) LockRepo(_ context.Context, repo *spec.Repo, holder flock.Holder) (func(), error) {
	f, err := h.Git.Inspect(h.ctx, repo.Path, repo.Base)
	if err != nil || f.CommonDir == "" {
		return nil, fmt.Errorf("repo %s: cannot find its git folder: %v", repo.Name, err)
	}
	l, err := flock.AcquireTimeout(h.ctx, layout.RepoLock(f.CommonDir), holder, h.timeout, h.onHeld("repo "+repo.Name+"'s lock"))
	var he *flock.HeldError
	switch {
	case errors.As(err, &he):
		return nil, fmt.Errorf("repo %s is used by another wave: %w", repo.Name, err)
	case err != nil:
		return nil, fmt.Errorf("repo %s: waiting for its lock: %w", repo.Name, err)
	}
	return func() { _ = l.Release() }, nil
}

// agentCommand is the command that runs an agent: its adapter's override
// (CADENCE_CLAUDE_BIN for the claude agent, built in or declared), when
// set, else its command (agent.Registry.Command).
func agentCommand(agents *agent.Registry, a *spec.Agent, getenv func(string) string) string {
	return agents.Command(a, getenv)
}

// Agent implements planner.Machine: it finds the command and asks its
// version, bounded to a few seconds, and passes on what the agent's
// adapter requires (minimum version, install hint) and why its sandbox
// cannot be used here (agent.SandboxMissing, with this PATH: the one the
// sessions get), whether or not the agent turns it off.
func (m machine) Agent(a *spec.Agent) planner.AgentFacts {
	f := planner.AgentFacts{Command: agentCommand(m.agents, a, m.getenv)}
	ad, ok := m.agents.Lookup(a.Kind)
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
	f.Version, f.Err = agentVersion(m.ctx, m.supervisor, path, tool.VersionArgs)
	return f
}

// agentVersion runs `CMD ARGS` (the adapter's version probe) with internal/proc (own process group,
// cadence's environment), bounded to ten seconds. A failure reads as exec's
// did: "exit status N", or "signal: NAME" when it was stopped.
func agentVersion(ctx context.Context, sup *proc.Supervisor, path string, args []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var stdout bytes.Buffer
	res, err := proc.Run(ctx, proc.Cmd{Path: path, Args: args, Env: os.Environ(),
		Stdout: &stdout, Grace: time.Second, Supervisor: sup})
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

// miseTimeout bounds one run of mise (mise ls, mise env) at plan time.
const miseTimeout = 30 * time.Second

// mise is the toolchain.MiseRunner of this machine: mise found on PATH,
// run through internal/proc with cadence's environment, bounded to
// miseTimeout; nil when mise is not installed. A failure says mise's
// standard error (its last lines) and how it ended.
func (m machine) mise() toolchain.MiseRunner {
	path, err := exec.LookPath("mise")
	if err != nil {
		return nil
	}
	return func(dir string, args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(m.ctx, miseTimeout)
		defer cancel()
		var stdout, stderr bytes.Buffer
		res, err := proc.Run(ctx, proc.Cmd{Path: path, Args: args, Dir: dir, Env: os.Environ(),
			Stdout: &stdout, Stderr: &stderr, Grace: time.Second, Supervisor: m.supervisor})
		msg := lastLines(stderr.String(), 3)
		switch {
		case err != nil:
			return nil, err
		case res.Stopped:
			return nil, fmt.Errorf("stopped after %s: %w", miseTimeout, ctx.Err())
		case res.Signal != 0:
			return nil, fmt.Errorf("signal: %v: %s", res.Signal, msg)
		case res.ExitCode != 0:
			return nil, fmt.Errorf("exit status %d: %s", res.ExitCode, msg)
		}
		return stdout.Bytes(), nil
	}
}

// lastLines is the last n non-blank lines of s, joined by "; ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// toolchainDrift says why the toolchain files of the repository's checkout
// (resolved above) are not those of its base branch, which the lots' work
// trees are made from ("" when they are the same, or the base cannot be
// read): a checkout on another branch, or an uncommitted .nvmrc, would
// give the lots a toolchain their own files do not ask for. The lots of
// the repository are refused then (planner: refused), naming the file.
func (m machine) toolchainDrift(r *spec.Repo, hasBase bool) string {
	if !hasBase {
		return ""
	}
	base, err := m.git.BaseFiles(m.ctx, r.Path, r.Base, toolchain.Files)
	if err != nil {
		return ""
	}
	root, err := filepath.EvalSymlinks(r.Path)
	if err != nil {
		return ""
	}
	for _, name := range toolchain.Files {
		work, werr := safefile.ReadWithin(root, filepath.Join(r.Path, name), 64<<10)
		inBase, ok := base[name]
		switch {
		case errors.Is(werr, fs.ErrNotExist) && !ok:
			continue
		case werr != nil && !errors.Is(werr, fs.ErrNotExist):
			return fmt.Sprintf("%s: %v", name, werr)
		case werr == nil && ok && bytes.Equal(work, inBase):
			continue
		case !ok:
			return fmt.Sprintf("%s of the checkout is not on branch %s, which the lots start from: commit it there, or remove it", name, r.Base)
		case werr != nil:
			return fmt.Sprintf("%s is on branch %s but not in the checkout: check out %s", name, r.Base, r.Base)
		}
		return fmt.Sprintf("%s of the checkout differs from branch %s's, which the lots start from: check out %s, or commit it there", name, r.Base, r.Base)
	}
	return ""
}

// OnBase implements planner.BaseMachine: whether commit is on r's base
// (gitint.Git.OnBase).
func (m machine) OnBase(r *spec.Repo, commit string) (bool, error) {
	return m.git.OnBase(m.ctx, r.Path, r.Base, commit)
}
