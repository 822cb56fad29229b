package proc

// SupervisorCommand is the hidden subcommand under which cadence-supervisor,
// or the cadence binary, runs as a step's supervisor: its main hands the
// arguments to Supervise. It is not meant for users and is not listed in
// the help. Its number names the protocol between Run and Supervise (the
// arguments and the channel's messages): it changes with them, so that a
// cadence-supervisor of another version refuses to run, saying so.
const SupervisorCommand = "__supervise2"

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
