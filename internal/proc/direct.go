package proc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// runDirect runs c in a session of its own (setsid: its own process group,
// and no controlling terminal), without a supervisor: when
// ctx ends first, the group gets SIGTERM, then SIGKILL after the grace
// period; when the process exits by itself, any process it left in its
// group is killed. A process that left the group (setsid) is out of reach.
func runDirect(ctx context.Context, c Cmd, log hclog.Logger) (Result, error) {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = c.Stdin
	cmd.ExtraFiles = c.ExtraFiles
	var out outputs
	defer out.closeAll()
	var err error
	if cmd.Stdout, cmd.Stderr, err = out.connect(c.Stdout, c.Stderr); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	start := time.Now()
	if err := startTracked(cmd, startPlain); err != nil {
		if log.IsDebug() {
			log.Debug("start failed", "argv", argv(c), "dir", c.Dir, "error", err)
		}
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	out.started()
	pgid := cmd.Process.Pid
	logStart(log, c, pgid)
	live.add(pgid, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	defer live.remove(pgid)
	if c.Started != nil {
		c.Started(pgid)
	}
	waited := make(chan error, 1)
	go func() { waited <- waitTracked(cmd) }()
	stopped := false
	select {
	case err = <-waited:
	case <-ctx.Done():
		stopped = true
		err = stopGroup(pgid, grace, waited)
	}
	// Nothing the process started may outlive it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	out.drain(drainWait)
	res := Result{ExitCode: cmd.ProcessState.ExitCode(), Stopped: stopped, Duration: time.Since(start)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal()
	}
	logEnd(log, c, pgid, res)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("wait %s: %w", c.Path, err)
	}
	return res, nil
}

// stopGroup sends SIGTERM to the group, waits up to grace for the leader,
// then sends SIGKILL, and returns the leader's wait error.
func stopGroup(pgid int, grace time.Duration, waited <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waited
	}
}
