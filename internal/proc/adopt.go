package proc

import (
	"os/exec"
	"sync"
)

// Cadence's own children: every process Run starts (a step's supervisor,
// or a direct process) is recorded here from its start to the end of its
// Wait, both under kids.mu, so that the reaper of adopted processes
// (AdoptOrphans) never takes one of them for a process it adopted.
var kids = struct {
	mu  sync.Mutex
	set map[int]bool
}{set: map[int]bool{}}

// childEnded wakes the reaper of adopted processes (AdoptOrphans) after one
// of Run's children was reaped; a wake-up waiting already absorbs the next.
var childEnded = make(chan struct{}, 1)

// startTracked starts cmd with start and records its pid as cadence's own
// child, under kids.mu.
func startTracked(cmd *exec.Cmd, start func(*exec.Cmd) error) error {
	kids.mu.Lock()
	defer kids.mu.Unlock()
	if err := start(cmd); err != nil {
		return err
	}
	kids.set[cmd.Process.Pid] = true
	return nil
}

// waitTracked waits for cmd, started with startTracked, forgets its pid
// once it is reaped, and wakes the reaper of adopted processes (its
// orphans are cadence's now).
func waitTracked(cmd *exec.Cmd) error {
	err := cmd.Wait()
	kids.mu.Lock()
	delete(kids.set, cmd.Process.Pid)
	kids.mu.Unlock()
	select {
	case childEnded <- struct{}{}:
	default:
	}
	return err
}

// startPlain is exec.Cmd's own Start, for startTracked.
func startPlain(cmd *exec.Cmd) error { return cmd.Start() }
