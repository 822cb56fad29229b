package proc

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/httpready"
)

// The test binary plays four parts, by its first argument: the tests; the
// supervisor (SupervisorCommand), as internal/cli would dispatch it; and
// "fake-cadence", a stand-in for cadence that runs one supervised step
// and waits to be killed; "tty-cadence", one under a terminal (ttyCadence).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case SupervisorCommand:
			ch := make(chan os.Signal, 16)
			signal.Notify(ch, SupervisorSignals...)
			os.Exit(Supervise(os.Args[2:], os.Environ(), ch))
		case "fake-cadence":
			os.Exit(fakeCadence(os.Args[2:]))
		case "service-cadence":
			os.Exit(serviceCadence(os.Args[2:]))
		case "tty-cadence":
			os.Exit(ttyCadence(os.Args[2:]))
		case "forge-report":
			os.Exit(forgeReport(os.Args[2:]))
		case "hold-channel":
			os.Exit(holdChannel(os.Args[2:]))
		case "hold-cadence-end":
			os.Exit(holdCadenceEnd(os.Args[2:]))
		case "steal-reports":
			os.Exit(stealReports(os.Args[2:]))
		case "two-steps-cadence":
			os.Exit(twoStepsCadence(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

// useSupervisor makes Run use the test binary as its supervisor until the
// test ends.
func useSupervisor(t testing.TB) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testSupervisor.Store(&Supervisor{Exe: exe, Argv0: "proc.test"})
	t.Cleanup(func() { testSupervisor.Store(nil) })
}

// testSupervisor is the supervisor run gives a Cmd that names none (set
// by useSupervisor for one test; tests using it do not run in parallel).
var testSupervisor atomic.Pointer[Supervisor]

// run is Run with testSupervisor's supervisor when c names none.
func run(ctx context.Context, c Cmd) (Result, error) {
	if c.Supervisor == nil {
		c.Supervisor = testSupervisor.Load()
	}
	return Run(ctx, c)
}

// bothWays runs test directly and under the supervisor.
func bothWays(t *testing.T, test func(t *testing.T)) {
	t.Run("direct", test)
	t.Run("supervised", func(t *testing.T) {
		if !supervisable {
			t.Skip("no supervisor on this system")
		}
		useSupervisor(t)
		test(t)
	})
}

// serviceCadence starts `sh -c args[0]` in args[1] as a supervised
// service (StartService) that never becomes ready, prints "step PID" once
// it runs, and waits to be killed.
func serviceCadence(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := StartService(context.Background(), Cmd{Supervisor: &Supervisor{Exe: exe, Argv0: "proc.test"}, Path: "/bin/sh", Args: []string{"-c", args[0]}, Dir: args[1],
		Env: []string{"PATH=/usr/bin:/bin"}, Started: func(pid int) { fmt.Printf("step %d\n", pid) }}, Ready{Answers: httpready.Answers, URL: "http://127.0.0.1:1/", Timeout: time.Hour})
	fmt.Printf("end %v\n", s.WaitReady(context.Background()))
	return 0
}

// fakeCadence runs `sh -c args[0]` in args[1] as a supervised step, prints
// "step PID" once it runs, and waits for the step (or to be killed).
func fakeCadence(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := Run(context.Background(), Cmd{Supervisor: &Supervisor{Exe: exe, Argv0: "proc.test"}, Path: "/bin/sh", Args: []string{"-c", args[0]}, Dir: args[1],
		Env: []string{"PATH=/usr/bin:/bin"}, Started: func(pid int) { fmt.Printf("step %d\n", pid) }})
	fmt.Printf("end %+v %v\n", res, err)
	return 0
}
