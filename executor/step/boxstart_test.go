package step

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/internal/proc"
)

// boxCmd is a box running command in dir; a writable folder that does
// not exist makes bwrap's own setup fail (as a bound path that went away
// between the look and the mount does).
func boxCmd(t *testing.T, bwrap, dir, command string, writable ...string) proc.Cmd {
	t.Helper()
	args, err := box.Args(box.Spec{Dir: dir, Writable: writable, Visible: []string{dir}, Status: true}, []string{"/bin/sh", "-c", command})
	if err != nil {
		t.Fatal(err)
	}
	return proc.Cmd{Path: bwrap, Args: args, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}}
}

// TestRunShellStartsABoxAgain: a box whose own setup failed never ran
// its command; runShell makes it again and starts it, and says so in the
// log; a command that fails in a box that started is not started again;
// boxes that never start end in box.ErrNotStarted, never in the exit
// code of a command that did not run.
func TestRunShellStartsABoxAgain(t *testing.T) {
	bwrap, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH"))
	if missing != "" {
		t.Skipf("no step sandbox here: %s", missing)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sup := range []*proc.Supervisor{nil, {Exe: exe, Argv0: "step.test"}} {
		name := "direct"
		if sup != nil {
			name = "supervised"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			gone := filepath.Join(dir, "gone")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			run := func(first proc.Cmd, again func() (proc.Cmd, error)) (proc.Result, error, string) {
				var log bytes.Buffer
				first.Stdout, first.Stderr, first.Supervisor = &log, &log, sup
				res, err := runShell(ctx, first, true, &log, func() (proc.Cmd, error) {
					c, err := again()
					c.Supervisor = sup
					return c, err
				})
				return res, err, log.String()
			}

			tries := 0
			res, err, log := run(boxCmd(t, bwrap, dir, "echo ran", gone), func() (proc.Cmd, error) {
				tries++
				return boxCmd(t, bwrap, dir, "echo ran"), nil
			})
			if err != nil || res.ExitCode != 0 || tries != 1 || !strings.Contains(log, "ran\n") ||
				!strings.Contains(log, "cadence: the step's sandbox (bwrap) did not start") {
				t.Errorf("a box started again: %+v, %v, %d tries; log:\n%s", res, err, tries, log)
			}

			tries = 0
			res, err, log = run(boxCmd(t, bwrap, dir, "echo failing; exit 1"), func() (proc.Cmd, error) {
				tries++
				return boxCmd(t, bwrap, dir, "true"), nil
			})
			if err != nil || res.ExitCode != 1 || tries != 0 || strings.Contains(log, "cadence:") {
				t.Errorf("a command that failed in its box: %+v, %v, %d tries; log:\n%s", res, err, tries, log)
			}

			tries = 0
			res, err, log = run(boxCmd(t, bwrap, dir, "true", gone), func() (proc.Cmd, error) {
				tries++
				return boxCmd(t, bwrap, dir, "true", gone), nil
			})
			if !errors.Is(err, box.ErrNotStarted) || tries != boxStarts-1 {
				t.Errorf("boxes that never start: %+v, %v, %d tries; log:\n%s", res, err, tries, log)
			}
		})
	}
}
