package gitint

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestRunCancelled: a call whose context has ended is an *Error that
// carries the context's error.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tgit().Run(ctx, t.TempDir(), "version")
	var ge *Error
	if !errors.As(err, &ge) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v (%T)", err, err)
	}
}

// TestRunStoppedByContext: a git call still running when its context ends
// is stopped with its process group (the alias's sleep included) and is an
// *Error carrying the context's error.
func TestRunStoppedByContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := tgit().Run(ctx, t.TempDir(), "-c", "alias.nap=!sleep 30", "nap")
	var ge *Error
	if !errors.As(err, &ge) || !errors.Is(err, context.DeadlineExceeded) || ge.ExitCode == 0 {
		t.Fatalf("err %v (%T)", err, err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("stopping took %v", d)
	}
}

// TestRunStartFailure: git that cannot start (no such folder) is an *Error
// with exit code -1.
func TestRunStartFailure(t *testing.T) {
	_, err := tgit().Run(context.Background(), "/no/such/folder", "version")
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode != -1 || ge.Err == nil {
		t.Fatalf("err %v (%T)", err, err)
	}
}

// TestEnvFromBase: git's environment is the base it is given, without
// the variables that redirect git, with cadence's own entries.
func TestEnvFromBase(t *testing.T) {
	got := strings.Join(Env([]string{"PATH=/x", "GIT_DIR=/elsewhere", "LANG=fr_FR", "KEEP=1"}, "EXTRA=2"), " ")
	if want := "PATH=/x KEEP=1 GIT_ASKPASS= SSH_ASKPASS= SSH_ASKPASS_REQUIRE=never GCM_INTERACTIVE=never LC_ALL=C GIT_TERMINAL_PROMPT=0 GIT_OPTIONAL_LOCKS=0 EXTRA=2"; got != want {
		t.Errorf("Env = %q, want %q", got, want)
	}
	if got := strings.Join(Env(nil), " "); got != "GIT_ASKPASS= SSH_ASKPASS= SSH_ASKPASS_REQUIRE=never GCM_INTERACTIVE=never LC_ALL=C GIT_TERMINAL_PROMPT=0 GIT_OPTIONAL_LOCKS=0" {
		t.Errorf("Env of no base = %q", got)
	}
}

// TestGitRunsWithItsEnviron: each Git runs git from the environment it was
// made with, whatever the process's: two in one process see their own.
func TestGitRunsWithItsEnviron(t *testing.T) {
	dir := t.TempDir()
	ident := func(name string) string {
		g := NewGit(append(os.Environ(), "GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL=t@cadence.invalid", "GIT_DIR=/elsewhere"))
		out, err := g.Run(context.Background(), dir, "var", "GIT_AUTHOR_IDENT")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if a, b := ident("Ann Lead"), ident("Bo Step"); !strings.HasPrefix(a, "Ann Lead ") || !strings.HasPrefix(b, "Bo Step ") {
		t.Errorf("git saw %q and %q, want each Git's own author", a, b)
	}
}

// TestRunLogged: at debug level each git call is logged, start and end,
// with its duration, under the gitint sub-logger of the default logger.
func TestRunLogged(t *testing.T) {
	var buf bytes.Buffer
	prev := hclog.L() // (SetDefault returns nil before the first L)
	hclog.SetDefault(hclog.New(&hclog.LoggerOptions{Name: "cadence", Level: hclog.Debug, Output: &buf}))
	defer hclog.SetDefault(prev)
	dir := t.TempDir()
	if _, err := tgit().Run(context.Background(), dir, "version"); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{"[DEBUG] cadence.gitint: start: argv=\"git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgSign=false -c branch.autoSetupMerge=false -c gc.auto=0 -c maintenance.auto=false -c core.commitGraph=false version\" dir=" + dir, "[DEBUG] cadence.gitint: end: argv=\"git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgSign=false -c branch.autoSetupMerge=false -c gc.auto=0 -c maintenance.auto=false -c core.commitGraph=false version\"", "exit=0 duration="} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}

// StepEnviron drops git's location and configuration variables, replaces
// the caller's prompt settings by its own, and keeps everything else in
// order.
func TestStepEnviron(t *testing.T) {
	in := []string{"PATH=/bin", "GIT_DIR=/x/.git", "GIT_WORK_TREE=/x", "GIT_INDEX_FILE=/x/i",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=/dev/null",
		"GIT_CONFIG_PARAMETERS='core.hooksPath'='/dev/null'", "GIT_PREFIX=sub/", "GIT_COMMON_DIR=/x",
		"GIT_AUTHOR_NAME=me", "HOME=/h", "GIT_OBJECT_DIRECTORY=/o",
		"GIT_ASKPASS=/usr/lib/code/askpass.sh", "SSH_ASKPASS=/usr/bin/ksshaskpass", "GIT_TERMINAL_PROMPT=1"}
	got := strings.Join(StepEnviron(in), " ")
	if want := "PATH=/bin GIT_AUTHOR_NAME=me HOME=/h GIT_TERMINAL_PROMPT=0 GIT_ASKPASS= SSH_ASKPASS= SSH_ASKPASS_REQUIRE=never GCM_INTERACTIVE=never"; got != want {
		t.Errorf("StepEnviron = %q, want %q", got, want)
	}
}
