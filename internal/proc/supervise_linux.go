package proc

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// supervisable is true on Linux: PR_SET_CHILD_SUBREAPER and
// PR_SET_PDEATHSIG make the supervisor work.
const supervisable = true

// prctl options (linux/prctl.h).
const (
	prSetPdeathsig      = 1
	prSetChildSubreaper = 36
)

// connFD is the supervisor's end of the socket it is served on (Run's
// request socket, a unix stream socketpair).
const connFD = 3

// killTick is how often a supervisor that kills its tree looks again for
// processes that came to it (orphans are reparented to it without a
// signal).
const killTick = 10 * time.Millisecond

// Supervise is the supervisor's main, run by the cadence binary under the
// hidden subcommand SupervisorCommand. It serves steps one after another
// (serve) until Run closes its socket or cadence dies, then exits the
// process with 0 itself; it returns an exit code only when its arguments
// are wrong. The design follows Bazel's process-wrapper and tini; a
// supervisor is reused for the next step only once every process of the
// last step's tree is gone, so that, as with one supervisor per step,
// every child and orphan it has belongs to the one step it runs.
//
// args are, as Run passes them: the pid of the cadence that started it and
// the word "serve". The socket is fd 3 (connFD); the environment and the
// working folder of each step come with its request.
// sigs relays SupervisorSignals: the caller subscribes before calling, so
// that none of them finds its default action.
//
// The supervisor makes itself a child subreaper (PR_SET_CHILD_SUBREAPER:
// every orphan of the step's tree, daemons that called setsid included,
// is reparented to it) and asks for SIGUSR1 when its parent dies
// (PR_SET_PDEATHSIG, set here in the supervisor and not through Go's
// SysProcAttr.Pdeathsig; then getppid() is checked against the pid passed
// in, in case cadence died before that). The parent-death signal comes
// when the thread that forked the supervisor ends: Run forks from one
// goroutine locked to its thread for good, which never ends before cadence.
//
// For each request it starts the step in a process group of its own and
// writes on the socket "pid N" once it runs, and "exit CODE SIGNAL" (CODE
// -1 and the signal number when a signal ended it) when it has ended and
// every process of its tree is gone; "error TEXT" when it cannot start it.
// A stop request (SIGTERM, SIGINT, SIGHUP) sends SIGTERM to the step's
// group and, after the grace period, SIGKILL to the whole tree; SIGUSR1
// (cadence died, or KillAll) kills the whole tree at once. When the step
// ends by itself, what it left running is killed. The request's held
// files stay open until the last process of the tree is gone. Between
// steps, any of those signals but SIGCHLD ends the supervisor.
func Supervise(args, env []string, sigs <-chan os.Signal) int {
	if len(args) != 2 || args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "cadence: "+SupervisorCommand+": missing arguments (it is cadence's own)")
		return 2
	}
	ppid, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "cadence: "+SupervisorCommand+": bad arguments (it is cadence's own)")
		return 2
	}
	f := os.NewFile(connFD, "supervisor socket")
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cadence: "+SupervisorCommand+": no socket (it is cadence's own): "+err.Error())
		return 2
	}
	conn := fc.(*net.UnixConn)
	report := func(format string, a ...any) {
		_, _ = fmt.Fprintf(conn, format+"\n", a...)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		report("error cannot become a subreaper: %v", e)
		syscall.Exit(1)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(sigKillNow), 0); e != 0 {
		report("error cannot ask for the parent-death signal: %v", e)
		syscall.Exit(1)
	}
	if os.Getppid() != ppid {
		// cadence died before the parent-death signal was set.
		report("error cadence is gone")
		syscall.Exit(1)
	}
	serve(conn, sigs, report)
	// Nothing is left to flush or undo: exit at once. (os.Exit would run
	// the exit hooks, which in a -race test binary sleep a second.)
	syscall.Exit(0)
	return 0
}

// serve runs the steps requested on conn, one at a time, until conn ends
// or a signal other than SIGCHLD comes between two steps.
func serve(conn *net.UnixConn, sigs <-chan os.Signal, report func(string, ...any)) {
	type got struct {
		req   request
		files []*os.File
		err   error
	}
	reqs := make(chan got)
	go func() {
		for {
			q, files, err := readRequest(conn)
			reqs <- got{q, files, err}
			if err != nil {
				return
			}
		}
	}()
	devnull, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	for {
		select {
		case s := <-sigs:
			if s != syscall.SIGCHLD {
				return // cadence died, or stops: no step runs
			}
		case g := <-reqs:
			if g.err != nil {
				return // Run closed the socket (or broke the protocol)
			}
			runStep(g.req, g.files, devnull, sigs, report)
		}
	}
}

// runStep runs one requested step to the end of its tree and reports it.
func runStep(q request, files []*os.File, devnull *os.File, sigs <-chan os.Signal, report func(string, ...any)) {
	fd := func(i int) uintptr {
		if i >= 0 && i < len(files) {
			return files[i].Fd()
		}
		return devnull.Fd()
	}
	var pid int
	var err error
	if _, serr := os.Stat(q.Dir); serr != nil {
		// ForkExec's error would name the program, not the folder.
		if pe, ok := serr.(*os.PathError); ok {
			serr = pe.Err
		}
		err = &os.PathError{Op: "chdir", Path: q.Dir, Err: serr}
	} else {
		pid, err = syscall.ForkExec(q.Path, q.Argv, &syscall.ProcAttr{
			Dir: q.Dir, Env: q.Env, Files: []uintptr{fd(q.Std[0]), fd(q.Std[1]), fd(q.Std[2])},
			Sys: &syscall.SysProcAttr{Setpgid: true},
		})
		if err != nil {
			err = &os.PathError{Op: "fork/exec", Path: q.Path, Err: err}
		}
	}
	// The step holds its own standard files; the supervisor keeps only the
	// held ones, until the tree is gone.
	held := map[int]bool{}
	for _, i := range q.Hold {
		held[i] = true
	}
	for i, f := range files {
		if !held[i] {
			f.Close()
		}
	}
	defer func() {
		for i, f := range files {
			if held[i] {
				f.Close()
			}
		}
	}()
	if err != nil {
		report("error %s", err.Error())
		return
	}
	report("pid %d", pid)
	ws := superviseTree(pid, q.Grace, sigs)
	code, sig := ws.ExitStatus(), 0
	if ws.Signaled() {
		code, sig = -1, int(ws.Signal())
	}
	for i, f := range files {
		if held[i] {
			f.Close()
		}
	}
	held = nil
	report("exit %d %d", code, sig)
}

// superviseTree waits for the step pid and the rest of its tree, acting
// on sigs as Supervise says, and returns the step's wait status once no
// child is left.
func superviseTree(pid int, grace time.Duration, sigs <-chan os.Signal) syscall.WaitStatus {
	var (
		ws                syscall.WaitStatus
		stepDone, killing bool
		graceC            <-chan time.Time
		tick              *time.Ticker
	)
	for {
		children := true
		for {
			var st syscall.WaitStatus
			wpid, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				children = false // ECHILD: nobody left
				break
			}
			if wpid <= 0 {
				break
			}
			if wpid == pid {
				ws, stepDone = st, true
			}
		}
		if stepDone && !killing {
			// The step ended by itself: what it left dies with it.
			killing = true
		}
		if killing {
			if !children {
				return ws
			}
			killTree(pid)
			if tick == nil {
				tick = time.NewTicker(killTick)
				defer tick.Stop()
			}
		}
		var tickC <-chan time.Time
		if tick != nil {
			tickC = tick.C
		}
		select {
		case s := <-sigs:
			switch s {
			case syscall.SIGCHLD:
			case sigKillNow:
				killing = true
			default:
				if graceC == nil && !killing {
					_ = syscall.Kill(-pid, syscall.SIGTERM)
					graceC = time.After(grace)
				}
			}
		case <-graceC:
			killing = true
		case <-tickC:
		}
	}
}

// killTree sends SIGKILL to the step's process group, and to every child
// of the supervisor and the group it leads, if it leads one: processes that
// left the step's group (setsid) come to the supervisor as orphans once
// their parents are dead, and are killed in their turn.
func killTree(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	for _, c := range children(os.Getpid()) {
		if pgid, err := syscall.Getpgid(c); err == nil && pgid == c {
			_ = syscall.Kill(-c, syscall.SIGKILL)
		}
		_ = syscall.Kill(c, syscall.SIGKILL)
	}
}
