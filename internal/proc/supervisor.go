package proc

import (
	"os"
	"sync"
	"syscall"
)

// SupervisorCommand is the hidden subcommand under which the cadence binary
// runs as a step's supervisor: internal/cli hands its arguments to
// Supervise. It is not meant for users and is not listed in the help.
const SupervisorCommand = "__supervise"

// SupervisorSignals are the signals the supervisor handles; the caller of
// Supervise relays them (os/signal.Notify) before calling it, so that the
// parent-death signal never finds the default action (termination) set:
//
//   - SIGTERM, SIGINT, SIGHUP: cadence's stop request. The step's group
//     gets SIGTERM; after the grace period, the whole tree gets SIGKILL.
//   - SIGUSR1: kill now. The parent-death signal (cadence died), and
//     KillAll's request. The whole tree gets SIGKILL at once.
//   - SIGCHLD: a process of the tree ended; reap it.
var SupervisorSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGCHLD}

// sigKillNow is the supervisor's parent-death signal, and KillAll's.
const sigKillNow = syscall.SIGUSR1

// supervisor is how Run starts the supervisor: the program and the name
// it is given as argv[0].
type supervisor struct {
	exe, argv0 string
}

var (
	supMu sync.Mutex
	sup   *supervisor
)

// SetSupervisor makes Run start every step that is not Direct under a
// supervisor: the program exe, run with argv[0] set to argv0 and the
// arguments SupervisorCommand …, must hand them to Supervise. internal/cli
// calls it at start with the cadence binary (os.Executable) and the name
// it was run as; under testscript that is the test binary, whose main
// dispatches on argv[0]. An empty exe turns the supervisor off. Where the
// supervisor cannot work (not Linux), Run runs steps directly whatever is
// set.
func SetSupervisor(exe, argv0 string) {
	supMu.Lock()
	defer supMu.Unlock()
	if exe == "" {
		sup = nil
		return
	}
	sup = &supervisor{exe: exe, argv0: argv0}
}

// supervisorFor returns the supervisor c runs under, if any.
func supervisorFor(c Cmd) (supervisor, bool) {
	if c.Direct || !supervisable {
		return supervisor{}, false
	}
	supMu.Lock()
	defer supMu.Unlock()
	if sup == nil {
		return supervisor{}, false
	}
	return *sup, true
}
