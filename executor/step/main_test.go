package step_test

import (
	"os"
	"os/signal"
	"testing"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/proc"
)

// TestMain lets the test binary serve as the step supervisor
// (proc.SupervisorCommand), as internal/cli dispatches it, for the tests
// that run steps supervised (supervisor).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == proc.SupervisorCommand {
		ch := make(chan os.Signal, 16)
		signal.Notify(ch, proc.SupervisorSignals...)
		os.Exit(proc.Supervise(os.Args[2:], os.Environ(), ch))
	}
	os.Exit(m.Run())
}

// supervisor is the test binary as the step supervisor.
func supervisor(t testing.TB) *step.Supervisor {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &step.Supervisor{Exe: exe, Argv0: "step.test"}
}
