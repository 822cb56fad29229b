package proc

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// SupervisorSignals are the signals the supervisor catches: SIGCHLD, and
// every signal whose default action ends a process other than SIGKILL
// (which nothing can catch). The caller of Supervise relays them
// (os/signal.Notify) before calling it. SIGCHLD wakes it to reap; the
// others are caught only so that none, sent by any process of the user,
// ends the supervisor: its orders come from cadence over its channel,
// never from a signal (docs/running.md, "Signals").
var SupervisorSignals = []os.Signal{syscall.SIGCHLD,
	syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGABRT,
	syscall.SIGBUS, syscall.SIGFPE, syscall.SIGUSR1, syscall.SIGSEGV, syscall.SIGUSR2, syscall.SIGPIPE,
	syscall.SIGALRM, syscall.SIGTERM, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGVTALRM,
	syscall.SIGPROF, syscall.SIGIO, syscall.SIGPWR, syscall.SIGSYS, syscall.SIGSTKFLT}

// supervisable is true on Linux: PR_SET_CHILD_SUBREAPER makes the
// supervisor work.
const supervisable = true

// sysPidfdOpen is pidfd_open(2)'s number (the same on every architecture
// Go runs on Linux).
const sysPidfdOpen = 434

// prctl options (linux/prctl.h).
const prSetChildSubreaper = 36

// File descriptors the supervisor gets from Run: its end of the channel
// (channel_linux.go), then the held files (Cmd.Hold), then the step's
// extra files (Cmd.ExtraFiles).
const (
	statusFD = 3
	holdFD   = 4
)

// killTick is how often a supervisor that kills its tree looks again for
// processes that came to it (orphans are reparented to it without a
// signal).
const killTick = 10 * time.Millisecond

// Supervise is the supervisor's main, run by cadence-supervisor or the
// cadence binary under the hidden subcommand SupervisorCommand. Once the step ran and its end is
// reported, it exits the process with 0 itself (the step's own exit is in
// the report); it returns the supervisor's exit code only when it could
// not start the step. The design follows Bazel's process-wrapper and tini.
//
// args are, as Run passes them: the pid of the cadence that started it,
// the grace period (a time.Duration), the number of held files, the
// number of the step's extra files (given to the step as fd 3, 4, …), the
// encoded limits, the program (a path, looked up by cadence already) and its arguments. env
// is the step's whole environment; the working folder is the step's.
// sigs relays SupervisorSignals: the caller subscribes before calling, so
// that none of them finds its default action.
//
// The supervisor makes itself a child subreaper (PR_SET_CHILD_SUBREAPER:
// every orphan of the step's tree, daemons that called setsid included,
// is reparented to it). It takes orders only from cadence's end of the
// channel on fd 3 (channel_linux.go), never from signals, which any
// process of the user may send: "stop" sends SIGTERM to the step's group
// and, after the grace period, SIGKILL to the whole tree; "kill", and the
// end of the channel (cadence died: the kernel closed its end), kill the
// whole tree at once. The signals it relays (sigs) only wake it to reap.
//
// It starts the step in a process group of its own and sends "pid N" once
// it runs, and "exit CODE SIGNAL" (CODE -1 and the signal number when a
// signal ended it) when it has ended and every process of its tree is
// gone; "error TEXT" when it cannot start it. When the step ends by
// itself, what it left running is killed. The held files (fd 4…) stay
// open until the supervisor exits, after the last process of the tree.
func Supervise(args, env []string, sigs <-chan os.Signal) int {
	status := os.NewFile(statusFD, "channel")
	report := func(format string, a ...any) {
		if status != nil {
			fmt.Fprintf(status, format+"\n", a...)
		}
	}
	if len(args) < 6 {
		fmt.Fprintln(os.Stderr, "cadence: "+SupervisorCommand+": missing arguments (it is cadence's own)")
		return 2
	}
	ppid, err1 := strconv.Atoi(args[0])
	grace, err2 := time.ParseDuration(args[1])
	nhold, err3 := strconv.Atoi(args[2])
	nextra, err5 := strconv.Atoi(args[3])
	limits, err4 := decodeLimits(args[4])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || nhold < 0 || nextra < 0 {
		fmt.Fprintln(os.Stderr, "cadence: "+SupervisorCommand+": bad arguments (it is cadence's own)")
		return 2
	}
	// The step must inherit neither the status pipe nor the held files.
	syscall.CloseOnExec(statusFD)
	for i := range nhold {
		syscall.CloseOnExec(holdFD + i)
	}
	// The step's extra files: the step's fd 3, 4, … (ForkExec dups them
	// there), and not the supervisor's once the step runs.
	files := []uintptr{0, 1, 2}
	for i := range nextra {
		fd := holdFD + nhold + i
		syscall.CloseOnExec(fd)
		files = append(files, uintptr(fd))
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		report("error cannot become a subreaper: %v", e)
		return 1
	}
	// cadence's pidfd, opened before the check that cadence is still the
	// parent (then it is cadence's): the end of the channel alone does not
	// say cadence died while a step holds a copy of cadence's end
	// (pidfd_getfd).
	pidfd, _, e := syscall.Syscall(sysPidfdOpen, uintptr(ppid), 0, 0)
	if os.Getppid() != ppid {
		report("error cadence is gone")
		return 1
	}
	cmds := make(chan string, 4)
	if e == 0 {
		go func() {
			waitGone(int(pidfd))
			cmds <- cmdKill
		}()
	}
	go func() {
		// cadence's orders; its end closed (cadence died): kill.
		forged := 0
		for {
			m, err := receiveFrom(ppid, &forged, readBlocking(statusFD))
			if err != nil {
				cmds <- cmdKill
				return
			}
			cmds <- m
		}
	}()
	path, argv := args[5], args[5:]
	cg, warnings := makeStepCgroup(limits)
	for _, w := range warnings {
		report("warn %s", w)
	}
	sys := &syscall.SysProcAttr{Setpgid: true}
	if cg != nil && cg.v2fd >= 0 {
		sys.UseCgroupFD, sys.CgroupFD = true, cg.v2fd
	}
	if err := cg.enter(); err != nil {
		cg.leave()
		cg.remove()
		report("error cannot apply the step's limits: %v", err)
		return 1
	}
	if err := setRlimits(limits); err != nil {
		cg.leave()
		cg.remove()
		report("error cannot apply the step's limits: %v", err)
		return 1
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: files, Sys: sys})
	cg.leave()
	if err != nil {
		cg.remove()
		report("error %s", (&os.PathError{Op: "fork/exec", Path: path, Err: err}).Error())
		return 1
	}
	report("pid %d", pid)
	for _, fd := range files[3:] {
		_ = syscall.Close(int(fd))
	}
	ws := superviseTree(pid, grace, sigs, cmds, cg)
	code, sig := ws.ExitStatus(), 0
	if ws.Signaled() {
		code, sig = -1, int(ws.Signal())
	}
	hit := cg.hit()
	if hit == "" {
		hit = rlimitHit(limits, ws)
	}
	cg.remove()
	if hit != "" {
		report("limit %s", hit)
	}
	report("exit %d %d", code, sig)
	// Nothing is left to flush or undo: exit at once. (os.Exit would run
	// the exit hooks, which in a -race test binary sleep a second.)
	syscall.Exit(0)
	return 0
}

// limitPoll is how often a supervisor whose step has a cgroup looks for a
// limit the tree reached (stepCgroup.hit); it looks for a process that
// left the cgroup every escapeScan.
const limitPoll = 100 * time.Millisecond

// superviseTree waits for the step pid and the rest of its tree, acting
// on cadence's orders cmds as Supervise says (sigs only wake it to reap), and returns the step's wait status once no
// child is left. A tree that reaches a limit of its cgroup cg (nil for
// none) is killed at once: a fork refused or a process killed for memory
// leaves a tree that would otherwise run on crippled. So is a tree one of
// whose processes left the cgroup (stepCgroup.escaped): its limits no
// longer hold.
func superviseTree(pid int, grace time.Duration, sigs <-chan os.Signal, cmds <-chan string, cg *stepCgroup) syscall.WaitStatus {
	var (
		ws                syscall.WaitStatus
		stepDone, killing bool
		graceC            <-chan time.Time
		tick              *time.Ticker
		pollC             <-chan time.Time
		scanned           time.Time
	)
	if cg != nil && (cg.memDir != "" || cg.pidsDir != "") {
		poll := time.NewTicker(limitPoll)
		defer poll.Stop()
		pollC = poll.C
	}
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
		case <-sigs:
		case c := <-cmds:
			switch c {
			case cmdKill:
				killing = true
			case cmdStop:
				if graceC == nil && !killing {
					_ = syscall.Kill(-pid, syscall.SIGTERM)
					graceC = time.After(grace)
				}
			}
		case <-graceC:
			killing = true
		case <-tickC:
		case now := <-pollC:
			if !killing && now.Sub(scanned) >= escapeScan {
				scanned = now
				cg.escaped()
			}
			if !killing && cg.hit() != "" {
				killing = true
			}
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

// waitGone returns once the process of pidfd ended: through the runtime's
// poller (no thread waits), or a blocking ppoll where the poller refuses
// the pidfd.
func waitGone(pidfd int) {
	if syscall.SetNonblock(pidfd, true) == nil {
		f := os.NewFile(uintptr(pidfd), "pidfd")
		if rc, err := f.SyscallConn(); err == nil {
			if rc.Read(func(fd uintptr) bool { return pidfdReadable(int(fd), false) }) == nil {
				return
			}
		}
	}
	pidfdReadable(pidfd, true)
}

// pidfdReadable polls pidfd for its process's end, at once or (block)
// until it comes.
func pidfdReadable(pidfd int, block bool) bool {
	p := struct {
		fd              int32
		events, revents int16
	}{fd: int32(pidfd), events: 0x1} // POLLIN
	var ts *syscall.Timespec
	if !block {
		ts = &syscall.Timespec{}
	}
	for {
		n, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		return e == 0 && n == 1
	}
}
