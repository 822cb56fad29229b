package cli

import (
	"os"
	"os/signal"
	"path/filepath"

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

// supervisorProgram is the file name of the dedicated supervisor
// (cmd/cadence-supervisor) that cadence looks for beside its own binary.
const supervisorProgram = "cadence-supervisor"

// stepSupervisor is the supervisor of every step this process runs:
// cadence-supervisor when it is an executable file beside the cadence
// binary (os.Executable, its links resolved), else the cadence binary
// itself, run with the name cadence was run as (under testscript that is
// the test binary, which dispatches on it). nil when the binary cannot be
// found: steps then run without a supervisor.
func stepSupervisor() *proc.Supervisor {
	exe, err := os.Executable()
	if err != nil || len(os.Args) == 0 {
		return nil
	}
	return supervisorFor(exe, os.Args[0])
}

// supervisorFor is stepSupervisor for the cadence binary exe run as argv0.
func supervisorFor(exe, argv0 string) *proc.Supervisor {
	small := filepath.Join(filepath.Dir(exe), supervisorProgram)
	if fi, err := os.Stat(small); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return &proc.Supervisor{Exe: small, Argv0: supervisorProgram}
	}
	return &proc.Supervisor{Exe: exe, Argv0: argv0}
}
