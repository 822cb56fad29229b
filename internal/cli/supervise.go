package cli

import (
	"os"
	"os/signal"

	"github.com/cadence-run/cadence/internal/proc"
)

// superviseMain runs cadence as a step's supervisor (the hidden subcommand
// proc.SupervisorCommand, which proc.Run starts): the signals it handles
// are relayed before anything else, then proc.Supervise has the step's
// arguments and environment.
func superviseMain(args []string) int {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, proc.SupervisorSignals...)
	return proc.Supervise(args, os.Environ(), ch)
}

// stepSupervisor is the supervisor of every step this process runs: the
// cadence binary (os.Executable), run with the name cadence was run as
// (under testscript that is the test binary, which dispatches on it). nil
// when the binary cannot be found: steps then run without a supervisor.
func stepSupervisor() *proc.Supervisor {
	if exe, err := os.Executable(); err == nil && len(os.Args) > 0 {
		return &proc.Supervisor{Exe: exe, Argv0: os.Args[0]}
	}
	return nil
}
