// Command cadence-supervisor is cadence's step supervisor as a program of
// its own: cadence starts it for each step when it lies beside the cadence
// binary (go install github.com/cadence-run/cadence/cmd/...@VERSION
// installs both), and otherwise runs its own binary under the hidden
// subcommand instead (docs/running.md, "Signals"). It imports only
// internal/proc, so that it starts with no other package's initialisers
// (internal/archtest checks it). It is not meant to be run by hand.
package main

import (
	"fmt"
	"os"
	"os/signal"

	"github.com/cadence-run/cadence/internal/proc"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != proc.SupervisorCommand {
		fmt.Fprintf(os.Stderr, "cadence-supervisor: cadence starts it for each step; not to be run by hand (a cadence of another version than this one runs it: install both from one version)\n")
		os.Exit(2)
	}
	// The signals are relayed before anything else (proc.SupervisorSignals).
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, proc.SupervisorSignals...)
	os.Exit(proc.Supervise(os.Args[2:], os.Environ(), ch))
}
