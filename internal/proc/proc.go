// Package proc runs child processes the way cadence must: bound to a
// context, with an explicit environment, in their own process group and
// session (no controlling terminal: nothing a step runs can prompt on the
// lead's terminal or read from it), stdin from /dev/null unless given, and
// stopped as a group (SIGTERM, a grace period, then SIGKILL) so that no
// descendant outlives the step that started it. It is cadence's one process
// runner: agent sessions, command lots, test gates, git (gitint) and the
// agent version probe all start their processes through Run.
//
// On Linux, when the caller names a supervisor (Cmd.Supervisor),
// every step but the ones marked Direct runs under a small supervisor of
// its own, started fresh for it: cmd/cadence-supervisor, or the cadence
// binary re-executed, with the hidden subcommand SupervisorCommand, which
// their main hands to Supervise. The supervisor is a child subreaper that
// takes orders from cadence only over its socket (channel_linux.go) and
// kills the step's tree when that socket's other end closes (cadence
// died), so that nothing a step started outlives the step, or cadence:
// see Supervise. EndMarked ends the processes an earlier cadence left, found
// by the mark in their environment.
//
// At debug level Run logs every process it starts and ends (argv, folder,
// pid, exit, duration) to Cmd.Log, or to the default logger's "proc"
// sub-logger (hclog.L(), which internal/cli sets once).
package proc

import (
	"context"
	"errors"
	"io"
	"os"
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
	// Stdin, Stdout and Stderr default to nothing (/dev/null).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Grace is the time between SIGTERM and SIGKILL (DefaultGrace if zero).
	Grace time.Duration
	// Started, when set, is called with the pid once the process runs.
	Started func(pid int)
	// Log receives the start and end of the process at debug level; nil
	// means hclog.L().Named("proc").
	Log hclog.Logger
	// Hold are files the step's supervisor keeps open until the last
	// process of the step is gone, even when cadence dies first: a
	// session's slot lock (flock(2) belongs to the open file, so the lock
	// lasts as long as the step's tree). Without a supervisor cadence
	// holds them, as the caller does anyway.
	Hold []*os.File
	// ExtraFiles are open files the step's program gets as fd 3, 4, …
	// (exec.Cmd's ExtraFiles), through the supervisor when there is one,
	// which closes its own copies once the program runs. The caller keeps
	// and closes its copies.
	ExtraFiles []*os.File
	// Marks are environment entries ("KEY=value", also in Env) that every
	// process of the step carries (cadence's CADENCE_WAVE_ID and
	// CADENCE_LOT). When the supervisor is killed before it reports (a
	// step that kills its own supervisor), its subreaper duty dies with it:
	// Run then ends, besides the step's process group, every process still
	// carrying all of them (EndMarked), so that what the step started does
	// not outlive the step. A process that also dropped the marks and left
	// the group is out of reach (docs/running.md, "Signals").
	Marks []string
	// Limits bound the step's tree (see Limits): applied by the
	// supervisor, so a Direct step, or one run where there is no
	// supervisor, runs without them.
	Limits Limits
	// Supervisor, when set, is the supervisor the step runs under (Linux);
	// nil runs it directly (Run).
	Supervisor *Supervisor
	// Direct runs the process without the supervisor, even when one is
	// given: for short calls
	// whose kill halfway would do more harm than their running on for a
	// moment after cadence died (git: a killed git leaves index.lock).
	Direct bool
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
	// LimitHit names the limit of Cmd.Limits the step reached, if the
	// supervisor saw one: its tree was then ended (memory, processes), or
	// the kernel's signal ended the process (cpu_time, file_size).
	LimitHit Limit
}

// Run starts c and waits for it. When ctx ends first, the step gets
// SIGTERM, then SIGKILL after the grace period. When the process exits by
// itself, whatever it left running is killed. The error is non-nil only
// when the process could not be started or waited for.
//
// With a supervisor (c.Supervisor, Linux), the step runs under it:
// its whole tree, daemons that called setsid included, dies with the step,
// and with cadence if cadence dies first; c.Hold stays open until then.
// Without one (none given, c.Direct, other systems), the
// step runs directly in its own process group, and only that group is
// killed.
func Run(ctx context.Context, c Cmd) (Result, error) {
	log := c.Log
	if log == nil {
		log = hclog.L().Named("proc")
	}
	if s, ok := supervisorFor(c); ok {
		return runSupervised(ctx, c, s, log)
	}
	return runDirect(ctx, c, log)
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
	if s, ok := readStat(pid); ok {
		return !s.dead() && s.pgrp == pid
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// steps is the set of steps Run started and that have not ended, each
// with how to kill it at once.
type steps struct {
	mu  sync.Mutex
	set map[int]func()
}

var live = &steps{set: map[int]func(){}}

func (g *steps) add(pid int, kill func()) {
	g.mu.Lock()
	g.set[pid] = kill
	g.mu.Unlock()
}

func (g *steps) remove(pid int) {
	g.mu.Lock()
	delete(g.set, pid)
	g.mu.Unlock()
}

// KillAll kills every step Run started that has not ended, at once (no
// grace): for an immediate exit (a second SIGINT), so that nothing
// survives. A direct step's process group gets SIGKILL; a supervised
// step's supervisor is told to kill the step's whole tree now.
func KillAll() {
	live.mu.Lock()
	defer live.mu.Unlock()
	for _, kill := range live.set {
		kill()
	}
}
