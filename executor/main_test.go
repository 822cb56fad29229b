package executor

import (
	"os"
	"os/signal"
	"testing"

	"github.com/cadence-run/cadence/internal/proc"
)

// TestMain lets the test binary serve as the step supervisor
// (proc.SupervisorCommand), as internal/cli dispatches it, for the tests
// and benchmarks that run steps supervised (useSupervisor).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == proc.SupervisorCommand {
		ch := make(chan os.Signal, 16)
		signal.Notify(ch, proc.SupervisorSignals...)
		os.Exit(proc.Supervise(os.Args[2:], os.Environ(), ch))
	}
	os.Exit(m.Run())
}

// useSupervisor runs every step of h under the test binary as its
// supervisor, as cadence does.
func useSupervisor(tb testing.TB, h *harness) {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	h.sup = &proc.Supervisor{Exe: exe, Argv0: "executor.test"}
}
