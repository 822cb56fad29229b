// Package gitint is everything cadence does to git: a bounded git runner,
// preflight facts about repositories, and (as the executor grows) worktrees,
// integration and push guards. Every git call goes through Git.Run, which starts
// git with internal/proc: bound to a context with a timeout, in its own
// process group, with an explicit environment (LC_ALL=C, no prompts, no
// inherited GIT_DIR and friends).
//
// The environment git starts from is the caller's: internal/cli, the only
// package that reads the process environment, makes a [Git] (or a [Repos],
// which is one) with it, and every git call runs through that value. At
// debug level every git call is logged with its duration (the "gitint"
// sub-logger of hclog.L()).
package gitint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/hashicorp/go-hclog"
)

// DefaultTimeout bounds a single git call unless the context is shorter.
const DefaultTimeout = 2 * time.Minute

// Grace is the time a cancelled git call gets between SIGTERM (on which git
// removes its lock files) and SIGKILL.
const Grace = time.Second

// Error is a failed git call: its arguments, exit code and stderr.
type Error struct {
	Dir      string
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

// Error describes the call and what git said.
func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s (in %s): exit %d: %s", strings.Join(e.Args, " "), e.Dir, e.ExitCode, msg)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// scrubbed are variables that cadence's own git calls set themselves.
var scrubbed = map[string]bool{
	"LC_ALL": true, "LANG": true, "GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true,
}

// locationVars are git's variables that say where a repository, its
// index, objects or configuration are (git(1) "ENVIRONMENT"): set by the
// caller (a git alias sets GIT_DIR and GIT_PREFIX; a hook GIT_INDEX_FILE),
// they would send a lot's git commands to the caller's repository instead of
// the lot's worktree. GIT_CONFIG* (GIT_CONFIG_COUNT/KEY_n/VALUE_n,
// GIT_CONFIG_PARAMETERS, GIT_CONFIG_GLOBAL, …) would inject configuration
// such as core.hooksPath.
var locationVars = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_INDEX_VERSION": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true,
	"GIT_NAMESPACE": true, "GIT_PREFIX": true, "GIT_CEILING_DIRECTORIES": true,
	"GIT_DISCOVERY_ACROSS_FILESYSTEM": true, "GIT_QUARANTINE_PATH": true, "GIT_SHALLOW_FILE": true,
	"GIT_GRAFT_FILE": true, "GIT_REPLACE_REF_BASE": true, "GIT_NO_REPLACE_OBJECTS": true,
	"GIT_IMPLICIT_WORK_TREE": true,
}

// noPrompt are the environment entries that keep every program of a step
// from asking anyone for credentials (a step has no terminal either:
// internal/proc), so that a credential request fails at once with its
// cause instead of waiting for an answer or opening the lead's helper:
//
//   - GIT_TERMINAL_PROMPT=0: git dies with "could not read Username for
//     '<url>': terminal prompts disabled";
//   - GIT_ASKPASS empty: git runs no askpass program (an empty value wins
//     over core.askPass and SSH_ASKPASS, git-credential(1));
//   - SSH_ASKPASS empty and SSH_ASKPASS_REQUIRE=never: ssh (8.4 and
//     later) runs no askpass program; without a terminal a passphrase or
//     an unknown host key fails the connection. Keys of a running
//     ssh-agent, the user's ssh configuration and GIT_SSH_COMMAND work
//     as they do (no BatchMode is forced on them);
//   - GCM_INTERACTIVE=never: Git Credential Manager uses stored
//     credentials and opens no window.
//
// Credential helpers that answer from a store (credential.helper) still
// answer.
var noPrompt = []string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "SSH_ASKPASS_REQUIRE=never", "GCM_INTERACTIVE=never"}

// StepEnviron returns env ("KEY=value" entries) without git's location and
// configuration variables (locationVars, and every GIT_CONFIG*), and with
// prompts turned off (noPrompt, replacing env's own entries of those
// names): the base environment of every step cadence runs (agent
// sessions, command lots, test gates), so that git inside a step works on
// the step's own worktree whatever the caller of cadence had set
// (docs/running.md, "No step reaches your terminal": git's location
// variables of the caller never reach a step),
// and nothing a step runs asks the lead for credentials.
func StepEnviron(env []string) []string {
	drop := map[string]bool{}
	for _, kv := range noPrompt {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	out := make([]string, 0, len(env)+len(noPrompt))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if locationVars[k] || strings.HasPrefix(k, "GIT_CONFIG") || drop[k] {
			continue
		}
		out = append(out, kv)
	}
	return append(out, noPrompt...)
}

// Git runs git with the base environment it was made with: cadence's
// git calls that belong to no wave's repositories (preflight facts,
// clean, guards). [Repos] is a Git too.
type Git struct {
	// Environ is the environment git starts from ("KEY=value" entries):
	// the process's, which internal/cli reads. Env derives git's own
	// from it.
	Environ []string
	// WitnessClient is the cadence binary (an absolute path) that the
	// lead-side hooks of the guards this Git installs run as the witness
	// client; "": the hooks report nothing, and every move of a guarded
	// ref during a step is put back as an incident. internal/cli sets it
	// to os.Executable.
	WitnessClient string
}

// NewGit returns a Git starting from the environment environ.
func NewGit(environ []string) Git { return Git{Environ: environ} }

// Env returns the environment git runs with: base without the variables
// that redirect git (StepEnviron, and cadence's own settings), plus
// LC_ALL=C, GIT_TERMINAL_PROMPT=0, GIT_OPTIONAL_LOCKS=0 and the extra
// entries.
func Env(base []string, extra ...string) []string {
	var env []string
	for _, kv := range StepEnviron(base) {
		k, _, _ := strings.Cut(kv, "=")
		if !scrubbed[k] {
			env = append(env, kv)
		}
	}
	return append(env, append([]string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0"}, extra...)...)
}

// Run runs git with args in dir and returns its stdout. A non-zero exit is an
// *Error carrying stderr.
func (g Git) Run(ctx context.Context, dir string, args ...string) (string, error) {
	return g.run(ctx, dir, nil, nil, args...)
}

// runEnv is Run with extra environment entries.
func (g Git) runEnv(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return g.run(ctx, dir, env, nil, args...)
}

// runStdin is Run with the given standard input.
func (g Git) runStdin(ctx context.Context, dir, stdin string, args ...string) (string, error) {
	var in io.Reader
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	return g.run(ctx, dir, nil, in, args...)
}

// RunInput is Run with stdin as git's standard input (nil: none): for
// the git commands that read data only from it (index-pack --stdin).
func (g Git) RunInput(ctx context.Context, dir string, stdin io.Reader, args ...string) (string, error) {
	return g.run(ctx, dir, nil, stdin, args...)
}

// noHooks prefixes git's arguments with `-c core.hooksPath=/dev/null`:
// cadence's own git calls (worktrees, rebase, fast-forward, refs) run no
// hook of the repository. A hook is code of the repository, which a lot may
// have written (the common git dir is the lots' too), and one started by
// cadence's own call would run outside any step, unsupervised, unmarked:
// a `setsid sleep &` in a post-checkout hook outlived cadence. The lead's
// own post-merge or post-checkout hooks therefore do not run when cadence
// fast-forwards the base's checkout or makes a worktree (docs/integration.md,
// "Hooks"). `git config` reads are left as they are, so
// that the real core.hooksPath can be read (hookPath).
//
// The same goes for the other programs a repository's config can make
// cadence's calls start (status, worktree add/remove, rebase, merge
// --ff-only, update-ref, for-each-ref, diff for patch-id): safeConfig
// turns off those git lets a command line turn off. What is left (filter
// drivers named by .gitattributes on checkout, merge drivers during a
// rebase, core.sshCommand and credential helpers of ls-remote) is covered
// by the config check after every step (ReadConfigFiles, RestoreConfig),
// which puts a planted setting back before cadence's next git call.
func noHooks(args []string) []string {
	if len(args) > 0 && args[0] == "config" {
		return args
	}
	return append(append([]string{"-c", "core.hooksPath=/dev/null"}, safeConfig...), args...)
}

// safeConfig are the -c settings of every cadence git call but git config:
//   - core.fsmonitor=false: status, checkout, worktree add and rebase run
//     the fsmonitor program a config names;
//   - commit.gpgSign=false: a rebase signs with gpg.program otherwise;
//   - branch.autoSetupMerge=false: worktree add -b writes no tracking
//     entry into the repository's config (cadence writes that file only
//     when it installs or removes its guard, so the config check holds);
//   - gc.auto=0, maintenance.auto=false: merge, rebase and commit start
//     no detached `git gc --auto`, which apply (a child subreaper) would
//     adopt and kill halfway, leaving gc.log.lock in the repository (the
//     user's own git runs its housekeeping as before);
//   - core.commitGraph=false: cadence's ancestry and history questions are
//     answered from the commits, never from a commit-graph file a step
//     may have planted in the objects folder (writable in the sandbox).
var safeConfig = []string{"-c", "core.fsmonitor=false", "-c", "commit.gpgSign=false", "-c", "branch.autoSetupMerge=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.commitGraph=false"}

func (g Git) run(ctx context.Context, dir string, extraEnv []string, stdin io.Reader, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		// Like exec.CommandContext: an ended context starts nothing.
		return "", &Error{Dir: dir, Args: args, ExitCode: -1, Err: err}
	}
	var stdout, stderr bytes.Buffer
	// Direct: no supervisor for git (proc.Cmd.Direct): it doubles the cost
	// of a short call, and a git killed halfway leaves index.lock behind.
	c := proc.Cmd{Path: "git", Args: noHooks(args), Dir: dir, Env: Env(g.Environ, extraEnv...),
		Stdout: &stdout, Stderr: &stderr, Grace: Grace, Log: hclog.L().Named("gitint"), Direct: true}
	if stdin != nil {
		c.Stdin = stdin
	}
	res, err := proc.Run(ctx, c)
	switch {
	case err != nil:
	case res.Signal != 0:
		err = fmt.Errorf("signal: %v", res.Signal)
	case res.ExitCode != 0:
		err = fmt.Errorf("exit status %d", res.ExitCode)
	case res.Stopped:
		err = fmt.Errorf("stopped")
	default:
		return stdout.String(), nil
	}
	ge := &Error{Dir: dir, Args: args, ExitCode: res.ExitCode, Stderr: stderr.String(), Err: err}
	if ctx.Err() != nil {
		ge.Err = fmt.Errorf("%w: %w", err, ctx.Err())
	}
	return stdout.String(), ge
}
