// Package proc runs child processes the way cadence must: bound to a
// context, with an explicit environment, in their own process group, and
// stopped as a group (SIGTERM, a grace period, then SIGKILL) so that no
// descendant outlives the step that started it. It is cadence's one process
// runner: agent sessions, command lots, test gates, git (gitint) and the
// agent version probe all start their processes through Run.
//
// At debug level Run logs every process it starts and ends (argv, folder,
// pid, exit, duration) to Cmd.Log, or to the default logger's "proc"
// sub-logger (hclog.L(), which internal/cli sets once).
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultGrace is how long a process group gets between SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

// Cmd describes a process to run.
type Cmd struct {
	// Path and Args are the program and its arguments (Args without the
	// program name).
	Path string
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the whole environment; nil means an empty one, never the
	// parent's implicitly.
	Env []string
	// Stdin, Stdout and Stderr default to nothing.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Grace is the time between SIGTERM and SIGKILL (DefaultGrace if zero).
	Grace time.Duration
	// Started, when set, is called with the pid once the process runs.
	Started func(pid int)
	// Log receives the start and end of the process at debug level; nil
	// means hclog.L().Named("proc").
	Log hclog.Logger
}

// Result is how a process ended.
type Result struct {
	// ExitCode is the exit status, or -1 when killed by a signal.
	ExitCode int
	// Signal is the signal that ended the process, if any.
	Signal syscall.Signal
	// Stopped is true when the context ended the process (timeout or
	// cancellation) rather than the process ending by itself.
	Stopped bool
	// Duration is the wall time from start to end.
	Duration time.Duration
}

// Run starts c and waits for it. When ctx ends first, the whole process
// group gets SIGTERM, then SIGKILL after the grace period. When the process
// exits by itself, any process it left in its group is killed. The error is
// non-nil only when the process could not be started or waited for.
func Run(ctx context.Context, c Cmd) (Result, error) {
	log := c.Log
	if log == nil {
		log = hclog.L().Named("proc")
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = c.Stdin
	var out outputs
	defer out.closeAll()
	var err error
	if cmd.Stdout, cmd.Stderr, err = out.connect(c.Stdout, c.Stderr); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		if log.IsDebug() {
			log.Debug("start failed", "argv", argv(c), "dir", c.Dir, "error", err)
		}
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	out.started()
	pgid := cmd.Process.Pid
	logStart(log, c, pgid)
	live.add(pgid)
	defer live.remove(pgid)
	if c.Started != nil {
		c.Started(pgid)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
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

// Alive reports whether the process group leader that Run started as pid
// still runs: the process exists, is not a zombie (a dead process nobody
// has reaped yet), and still leads its own process group (a reused pid
// belongs to a process that, almost always, does not). Where /proc cannot
// tell, any process with that pid counts.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parens.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) >= 3 {
				return f[0] != "Z" && f[0] != "X" && f[2] == strconv.Itoa(pid)
			}
		}
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// groups is the set of process groups started by Run and not yet ended.
type groups struct {
	mu  sync.Mutex
	set map[int]bool
}

var live = &groups{set: map[int]bool{}}

func (g *groups) add(pgid int) {
	g.mu.Lock()
	g.set[pgid] = true
	g.mu.Unlock()
}

func (g *groups) remove(pgid int) {
	g.mu.Lock()
	delete(g.set, pgid)
	g.mu.Unlock()
}

// KillAll sends SIGKILL to every process group Run started that has not
// ended: for an immediate exit (a second SIGINT), so that nothing survives.
func KillAll() {
	live.mu.Lock()
	defer live.mu.Unlock()
	for pgid := range live.set {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
