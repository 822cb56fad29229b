package proc

import (
	"context"
	"os"
	"testing"
)

// Below walks a process's parents: a step (here under its supervisor) is
// below the process that ran it, that process is not below its step, and
// what /proc cannot show is unknown.
func TestBelow(t *testing.T) { bothWays(t, testBelow) }

func testBelow(t *testing.T) {
	pids := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		run(ctx, Cmd{Path: "/bin/sleep", Args: []string{"30"}, Started: func(pid int) { pids <- pid }})
		close(done)
	}()
	pid := <-pids
	for _, tc := range []struct {
		name                string
		pid, ancestor       int
		wantBelow, wantKnow bool
	}{
		{"a step below the process that ran it", pid, os.Getpid(), true, true},
		{"a process is below itself", os.Getpid(), os.Getpid(), true, true},
		{"the process that ran a step is not below it", os.Getpid(), pid, false, true},
		{"nothing is below no process", pid, 0, false, true},
		{"no process is unknown", 0, os.Getpid(), false, false},
	} {
		if below, known := Below(tc.pid, tc.ancestor); below != tc.wantBelow || known != tc.wantKnow {
			t.Errorf("%s: Below(%d, %d) = %v, %v; want %v, %v", tc.name, tc.pid, tc.ancestor, below, known, tc.wantBelow, tc.wantKnow)
		}
	}
	cancel()
	<-done
	if below, known := Below(pid, os.Getpid()); below || known {
		t.Errorf("a process that ended: Below = %v, %v; want unknown", below, known)
	}
}
