package proc

import (
	"os"
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

// Supervisor is how Run starts a step's supervisor: the program Exe, run
// with argv[0] set to Argv0 and the arguments SupervisorCommand …, which
// must hand them to Supervise. internal/cli names it (the cadence binary,
// os.Executable, and the name it was run as; under testscript that is the
// test binary, whose main dispatches on argv[0]) and passes it down to
// what starts steps (Cmd.Supervisor).
type Supervisor struct {
	Exe, Argv0 string
}

// supervisorFor returns the supervisor c runs under, if any: c's own,
// unless c is Direct or the supervisor cannot work here (not Linux).
func supervisorFor(c Cmd) (Supervisor, bool) {
	if c.Direct || !supervisable || c.Supervisor == nil || c.Supervisor.Exe == "" {
		return Supervisor{}, false
	}
	return *c.Supervisor, true
}
