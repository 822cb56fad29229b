//go:build !linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// supervisable is false off Linux: no subreaper.
// Steps run directly in their own process group (docs/running.md, "Signals").
const supervisable = false

// SupervisorSignals are the signals the supervisor catches; off Linux
// there is no supervisor (an empty list would mean every signal to
// os/signal.Notify).
var SupervisorSignals = []os.Signal{syscall.SIGCHLD}

// Supervise is the supervisor's main; off Linux there is none, and it
// returns 2 saying so.
func Supervise(args, env []string, sigs <-chan os.Signal) int {
	fmt.Fprintln(os.Stderr, "cadence: the step supervisor needs Linux")
	return 2
}

func runSupervised(ctx context.Context, c Cmd, s Supervisor, log hclog.Logger) (Result, error) {
	return Result{ExitCode: -1}, errors.New("proc: no supervisor on this system")
}

// Enforced says no limit is enforced off Linux: steps run without the
// supervisor that applies them.
func Enforced(l Limits) []Enforcement {
	var out []Enforcement
	for _, k := range l.Set() {
		out = append(out, Enforcement{Limit: k, Why: "step limits need Linux"})
	}
	return out
}
