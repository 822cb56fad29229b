package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/ptytest"
)

// ttyCadence is the "tty-cadence" part of the test binary: a stand-in for
// cadence run under a terminal. It checks that it has one, then runs
// args[0] with `sh -c` through Run (under the supervisor when args[1] is
// "supervised") and prints "step exit CODE".
func ttyCadence(args []string) int {
	f, err := os.Open("/dev/tty")
	if err != nil {
		fmt.Printf("no terminal for the stand-in: %v\n", err)
		return 1
	}
	f.Close()
	var sup *Supervisor
	if args[1] == "supervised" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Println(err)
			return 1
		}
		sup = &Supervisor{Exe: exe, Argv0: "proc.test"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := Run(ctx, Cmd{Supervisor: sup, Path: "/bin/sh", Args: []string{"-c", args[0]}, Env: []string{"PATH=/usr/bin:/bin"},
		Stdout: os.Stdout, Stderr: os.Stdout, Grace: time.Second})
	fmt.Printf("step exit %d stopped %v %v\n", res.ExitCode, res.Stopped, err)
	return 0
}

// TestNoControllingTerminal: a step of a cadence run under a terminal
// cannot open it (/dev/tty): it runs in a session of its own, without a
// controlling terminal, so nothing it runs can prompt the lead or read
// the lead's keystrokes. Both ways.
func TestNoControllingTerminal(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		ptmx, pts := ptytest.Open(t)
		mode := "direct"
		if _, ok := supervisorFor(Cmd{}); ok {
			mode = "supervised"
		}
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		step := `if (exec 3</dev/tty) 2>/dev/null; then echo "step has a terminal"; else echo "step has no terminal"; fi; ps -o sid=,tty= -p $$`
		cmd := exec.CommandContext(ctx, exe, "tty-cadence", step, mode)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pts.Close()
		var out strings.Builder
		lines := bufio.NewScanner(ptmx)
		for lines.Scan() { // ends with EIO once the stand-in is gone
			out.WriteString(lines.Text() + "\n")
			if strings.HasPrefix(lines.Text(), "step exit") {
				break
			}
		}
		_ = cmd.Wait()
		t.Logf("%s", out.String())
		if !strings.Contains(out.String(), "step has no terminal") {
			t.Errorf("the step could open the terminal of the cadence that ran it:\n%s", out.String())
		}
	})
}
