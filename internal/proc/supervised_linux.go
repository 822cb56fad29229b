package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// supervisorMargin is how long Run gives a supervisor beyond the grace
// period to kill its tree before it kills the supervisor itself (a
// supervisor that hangs: never seen, but the step must end).
const supervisorMargin = 5 * time.Second

// runSupervised runs c under the supervisor s (see Supervise): the
// supervisor is started in a session of its own (setsid), out of reach of
// the terminal's signals and without a controlling terminal, which no
// process of the step can then get (only a session leader can), with the
// step's folder and environment, its end of the channel (channel_linux.go)
// as fd 3, c.Hold after it and c.ExtraFiles after those. Only messages
// the supervisor itself sent are believed. Started gets the step's pid, the
// leader of the step's process group.
func runSupervised(ctx context.Context, c Cmd, s Supervisor, log hclog.Logger) (Result, error) {
	// The program is looked up as exec.Command does, in cadence's PATH.
	look := exec.Command(c.Path)
	if look.Err != nil {
		if log.IsDebug() {
			log.Debug("start failed", "argv", argv(c), "dir", c.Dir, "error", look.Err)
		}
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, look.Err)
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	sr, sw, err := newChannel()
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	defer sr.Close()
	cmd := exec.Command(s.Exe)
	cmd.Args = append([]string{s.Argv0, SupervisorCommand, strconv.Itoa(os.Getpid()), grace.String(),
		strconv.Itoa(len(c.Hold)), strconv.Itoa(len(c.ExtraFiles)), c.Limits.encode(), look.Path}, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = c.Stdin
	cmd.ExtraFiles = append(append([]*os.File{sw}, c.Hold...), c.ExtraFiles...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out outputs
	defer out.closeAll()
	if cmd.Stdout, cmd.Stderr, err = out.connect(c.Stdout, c.Stderr); err != nil {
		sw.Close()
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	start := time.Now()
	err = startTracked(cmd, func(cmd *exec.Cmd) error { return cmd.Start() })
	sw.Close()
	if err != nil {
		if log.IsDebug() {
			log.Debug("start failed", "argv", argv(c), "dir", c.Dir, "error", err)
		}
		return Result{ExitCode: -1}, fmt.Errorf("start %s: supervisor: %w", c.Path, err)
	}
	out.started()
	supPid := cmd.Process.Pid
	lines := make(chan string, 4)
	forged := 0
	go func() {
		defer close(lines)
		read := readPolled(sr)
		for {
			m, err := receiveFrom(supPid, &forged, read)
			if err != nil {
				return
			}
			lines <- m
		}
	}()
	waited := make(chan error, 1)
	go func() { waited <- waitTracked(cmd) }()
	order := func(c string) { _, _ = sr.Write([]byte(c)) }

	// The first line is the step's pid, or why it could not start, after
	// what the supervisor warns of (limits it could not enforce).
	first, ok := <-lines
	for ok && strings.HasPrefix(first, "warn ") {
		log.Warn("step limits", "argv", argv(c), "warning", strings.TrimPrefix(first, "warn "))
		first, ok = <-lines
	}
	pid := 0
	if p, found := strings.CutPrefix(first, "pid "); found {
		pid, _ = strconv.Atoi(p)
	}
	if pid <= 0 {
		werr := <-waited
		out.drain(drainWait)
		msg, _ := strings.CutPrefix(first, "error ")
		if !ok || msg == "" {
			msg = fmt.Sprintf("the supervisor ended without starting it (%v)", werr)
		}
		if log.IsDebug() {
			log.Debug("start failed", "argv", argv(c), "dir", c.Dir, "error", msg)
		}
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %s", c.Path, msg)
	}
	logStart(log, c, pid)
	live.add(pid, func() {
		order(cmdKill)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	})
	defer live.remove(pid)
	if c.Started != nil {
		c.Started(pid)
	}
	stopped := false
	select {
	case err = <-waited:
	case <-ctx.Done():
		stopped = true
		err = stopSupervisor(supPid, pid, grace, order, waited)
	}
	out.drain(drainWait)
	// The supervisor is reaped: what it sent is queued on sr already. The
	// channel's end of file does not come while a step holds a copy of
	// the supervisor's end (pidfd_getfd) and killed it: read what is
	// queued, then stop waiting.
	_ = sr.SetReadDeadline(time.Now().Add(drainWait))
	res := Result{ExitCode: -1, Stopped: stopped, Duration: time.Since(start)}
	reported, lost := false, false
	for l := range lines {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "limit" {
			res.LimitHit = Limit(f[1])
		} else if len(f) == 3 && f[0] == "exit" {
			code, _ := strconv.Atoi(f[1])
			sig, _ := strconv.Atoi(f[2])
			res.ExitCode, res.Signal, reported = code, syscall.Signal(sig), true
		}
	}
	if !reported {
		// The supervisor itself was killed: say how it ended, and make
		// sure of the step's group and of whatever still carries the
		// step's marks (orphans the dead subreaper no longer holds).
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		if len(c.Marks) > 0 {
			if n, merr := EndMarked(c.Marks, 0); n > 0 && log.IsDebug() {
				log.Debug("supervisor killed: ended marked leftovers", "argv", argv(c), "ended", n, "error", merr)
			}
		}
		res.ExitCode = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
		if res.ExitCode == 0 {
			// The supervisor exits 0 only after its report: another
			// process took it off cadence's end (pidfd_getfd). Its 0 is
			// not the step's.
			res.ExitCode, lost = -1, true
		}
	}
	if forged > 0 {
		log.Warn("step forged supervisor messages: ignored", "argv", argv(c), "messages", forged)
	}
	logEnd(log, c, pid, res)
	if lost {
		return res, fmt.Errorf("wait %s: the supervisor's exit report never reached cadence (another process took it off the channel)", c.Path)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("wait %s: %w", c.Path, err)
	}
	return res, nil
}

// stopSupervisor orders the supervisor supPid to stop its step ("stop";
// it applies the grace period itself), then, should it not have ended
// after the grace and a margin, to kill the tree at once ("kill"), and at
// last kills it and the step's group.
func stopSupervisor(supPid, pid int, grace time.Duration, order func(string), waited <-chan error) error {
	order(cmdStop)
	t := time.NewTimer(grace + supervisorMargin)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
	}
	order(cmdKill)
	t.Reset(supervisorMargin)
	select {
	case err := <-waited:
		return err
	case <-t.C:
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(supPid, syscall.SIGKILL)
	return <-waited
}
