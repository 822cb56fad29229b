package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// supervisorMargin is how long Run gives a supervisor beyond the grace
// period to kill its tree before it kills the supervisor itself (a
// supervisor that hangs: never seen, but the step must end).
const supervisorMargin = 5 * time.Second

// forker starts processes from one goroutine locked to its OS thread for
// good: the parent-death signal of a supervisor comes when the thread that
// forked it ends (not the process), and Go ends threads of goroutines that
// exit locked; this thread never ends before cadence.
var forker struct {
	once sync.Once
	reqs chan func()
}

func startLocked(cmd *exec.Cmd) error {
	forker.once.Do(func() {
		forker.reqs = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range forker.reqs {
				f()
			}
		}()
	})
	done := make(chan error, 1)
	forker.reqs <- func() { done <- cmd.Start() }
	return <-done
}

// runSupervised runs c under a supervisor of s (see Supervise), taken
// from the pool of idle ones or started: the step's standard files and
// c.Hold go to it over its socket (SCM_RIGHTS) with the step's folder and
// environment. Started gets the step's pid, the leader of the step's
// process group. A supervisor goes back to the pool once it reported the
// step's end by itself; one that was signalled (a stop, KillAll) or broke
// the protocol is let go.
func runSupervised(ctx context.Context, c Cmd, s supervisor, log hclog.Logger) (Result, error) {
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
	q := request{Path: look.Path, Argv: append([]string{c.Path}, c.Args...), Env: c.Env, Dir: c.Dir,
		Grace: grace, Std: [3]int{-1, -1, -1}}
	if q.Env == nil {
		q.Env = []string{}
	}
	if q.Dir == "" {
		// The supervisor may have been started in another folder.
		q.Dir, _ = os.Getwd()
	}
	var out outputs
	defer out.closeAll()
	stdout, stderr, err := out.connect(c.Stdout, c.Stderr)
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	in, err := connectStdin(c.Stdin)
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}
	defer in.finish()
	var files []*os.File
	add := func(w any) int {
		if f, ok := w.(*os.File); ok && f != nil {
			files = append(files, f)
			return len(files) - 1
		}
		return -1
	}
	q.Std = [3]int{add(in.file), add(stdout), add(stderr)}
	for _, h := range c.Hold {
		q.Hold = append(q.Hold, add(h))
	}
	start := time.Now()
	p, err := takeSupervisor(s)
	if err == nil {
		err = sendRequest(p.conn, q, files)
		if err != nil {
			// An idle supervisor that died (killed by someone) refuses
			// the request: a new one takes it.
			p.retire()
			if p, err = startSupervisor(s); err == nil {
				err = sendRequest(p.conn, q, files)
			}
			if err != nil {
				err = fmt.Errorf("supervisor: %w", err)
			}
		}
	}
	// The supervisor holds its own copies now (or never will).
	out.started()
	in.started()
	if err != nil {
		if log.IsDebug() {
			log.Debug("start failed", "argv", argv(c), "dir", c.Dir, "error", err)
		}
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %w", c.Path, err)
	}

	// The first line is the step's pid, or why it could not start.
	first, ok := <-p.lines
	pid := 0
	if pp, found := strings.CutPrefix(first, "pid "); found {
		pid, _ = strconv.Atoi(pp)
	}
	if pid <= 0 {
		msg, isErr := strings.CutPrefix(first, "error ")
		if !ok || !isErr || msg == "" {
			p.retire()
			<-p.dead
			msg = fmt.Sprintf("the supervisor ended without starting it (%v)", p.waitErr)
		} else {
			p.release() // it started nothing: it serves the next step
		}
		if log.IsDebug() {
			log.Debug("start failed", "argv", argv(c), "dir", c.Dir, "error", msg)
		}
		return Result{ExitCode: -1}, fmt.Errorf("start %s: %s", c.Path, msg)
	}
	logStart(log, c, pid)
	supPid := p.cmd.Process.Pid
	live.add(pid, func() {
		p.signalled.Store(true)
		_ = syscall.Kill(supPid, sigKillNow)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	})
	defer live.remove(pid)
	if c.Started != nil {
		c.Started(pid)
	}
	stopped := false
	var last string
	select {
	case last, ok = <-p.lines:
	case <-ctx.Done():
		stopped = true
		last, ok = stopSupervisor(p, pid, grace)
	}
	out.drain(drainWait)
	res := Result{ExitCode: -1, Stopped: stopped, Duration: time.Since(start)}
	if f := strings.Fields(last); ok && len(f) == 3 && f[0] == "exit" {
		code, _ := strconv.Atoi(f[1])
		sig, _ := strconv.Atoi(f[2])
		res.ExitCode, res.Signal = code, syscall.Signal(sig)
		p.release()
	} else {
		// The supervisor itself was killed: say how it ended, and make
		// sure of the step's group and of whatever still carries the
		// step's marks (orphans the dead subreaper no longer holds).
		p.retire()
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		if len(c.Marks) > 0 {
			if n, merr := EndMarked(c.Marks, 0); n > 0 && log.IsDebug() {
				log.Debug("supervisor killed: ended marked leftovers", "argv", argv(c), "ended", n, "error", merr)
			}
		}
		<-p.dead
		res.ExitCode = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
	}
	logEnd(log, c, pid, res)
	return res, nil
}

// stopSupervisor asks p to stop its step pid (SIGTERM; it applies the
// grace period itself), then, should it not have reported after the grace
// and a margin, to kill the tree at once, and at last kills it and the
// step's group. It returns the supervisor's report of the step's end, if
// any (ok false: the supervisor ended without one).
func stopSupervisor(p *pooled, pid int, grace time.Duration) (string, bool) {
	p.signalled.Store(true)
	supPid := p.cmd.Process.Pid
	_ = syscall.Kill(supPid, syscall.SIGTERM)
	t := time.NewTimer(grace + supervisorMargin)
	defer t.Stop()
	select {
	case l, ok := <-p.lines:
		return l, ok
	case <-t.C:
	}
	_ = syscall.Kill(supPid, sigKillNow)
	t.Reset(supervisorMargin)
	select {
	case l, ok := <-p.lines:
		return l, ok
	case <-t.C:
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(supPid, syscall.SIGKILL)
	l, ok := <-p.lines
	return l, ok
}
