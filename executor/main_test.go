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

// useSupervisor runs every step of the test under the test binary as its
// supervisor, as cadence does, until the test ends.
func useSupervisor(tb testing.TB) {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	proc.SetSupervisor(exe, "executor.test")
	tb.Cleanup(func() { proc.SetSupervisor("", "") })
}
