// Package gitint is everything cadence does to git: a bounded git runner,
// preflight facts about repositories, and (as the executor grows) worktrees,
// integration and push guards. Every git call goes through Run: bound to a
// context with a timeout, in its own process group, with an explicit
// environment (LC_ALL=C, no prompts, no inherited GIT_DIR and friends).
package gitint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds a single git call unless the context is shorter.
const DefaultTimeout = 2 * time.Minute

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

// scrubbed are variables that would redirect git away from the repository
// it is run in.
var scrubbed = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_OBJECT_DIRECTORY": true,
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true, "GIT_NAMESPACE": true,
	"GIT_CEILING_DIRECTORIES": true, "GIT_PREFIX": true, "LC_ALL": true, "LANG": true,
	"GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true,
}

// Env returns the environment git runs with: the process environment without
// the variables that redirect git, plus LC_ALL=C, GIT_TERMINAL_PROMPT=0 and
// the extra entries.
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !scrubbed[k] {
			env = append(env, kv)
		}
	}
	return append(env, append([]string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0"}, extra...)...)
}

// Run runs git with args in dir and returns its stdout. A non-zero exit is an
// *Error carrying stderr.
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	return run(ctx, dir, nil, "", args...)
}

// runEnv is Run with extra environment entries.
func runEnv(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return run(ctx, dir, env, "", args...)
}

// runStdin is Run with the given standard input.
func runStdin(ctx context.Context, dir, stdin string, args ...string) (string, error) {
	return run(ctx, dir, nil, stdin, args...)
}

func run(ctx context.Context, dir string, extraEnv []string, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = Env(extraEnv...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		ge := &Error{Dir: dir, Args: args, ExitCode: -1, Stderr: stderr.String(), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.ExitCode = ee.ExitCode()
		}
		if ctx.Err() != nil {
			ge.Err = fmt.Errorf("%w: %w", err, ctx.Err())
		}
		return stdout.String(), ge
	}
	return stdout.String(), nil
}
