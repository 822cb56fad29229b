package proc

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// endPoll is how often EndMarked looks again for marked processes.
const endPoll = 20 * time.Millisecond

// endDeadline bounds how long EndMarked waits, after SIGKILL, for the
// kernel to take the processes away (a process in uninterruptible sleep
// on a dead network file system can take long).
const endDeadline = 10 * time.Second

// Marked lists the processes, other than this one, whose environment holds
// every entry of marks ("KEY=value"), as /proc shows them: cadence marks
// every step's processes (CADENCE_WAVE_ID, CADENCE_LOT, CADENCE_SESSION).
// Processes of other users and systems without /proc are out of its
// reach: it lists none. Zombies have no environment and are not listed.
func Marked(marks []string) []int {
	if len(marks) == 0 {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, pid := range pids() {
		if pid != self && hasEnv(pid, marks) {
			out = append(out, pid)
		}
	}
	return out
}

// EndMarked ends every process Marked(marks) lists, and the process group
// each of them leads: SIGTERM first, then, for what is still there after
// grace, SIGKILL, and it waits until none is left. It returns how many
// processes it found, and an error naming those still alive 10 s after
// SIGKILL (or that it may not signal). Processes that appear meanwhile
// with the mark are ended too.
func EndMarked(marks []string, grace time.Duration) (int, error) {
	found := map[int]syscall.Signal{} // the last signal each was sent
	signal := func(sig syscall.Signal) []int {
		live := Marked(marks)
		for _, pid := range live {
			if found[pid] == sig {
				continue
			}
			found[pid] = sig
			if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
				_ = syscall.Kill(-pid, sig)
			}
			_ = syscall.Kill(pid, sig)
		}
		return live
	}
	if len(signal(syscall.SIGTERM)) == 0 {
		return 0, nil
	}
	killAt := time.Now().Add(grace)
	deadline := killAt.Add(endDeadline)
	for {
		time.Sleep(endPoll)
		sig := syscall.SIGTERM
		if time.Now().After(killAt) {
			sig = syscall.SIGKILL
		}
		live := signal(sig)
		if len(live) == 0 {
			return len(found), nil
		}
		if time.Now().After(deadline) {
			return len(found), fmt.Errorf("processes %v (marked %v) are still alive after SIGKILL", live, marks)
		}
	}
}

// Carries reports whether the process pid's environment holds every entry
// of marks. known is false where /proc cannot tell (no /proc: other
// systems); a process that is gone or another user's carries nothing.
func Carries(pid int, marks []string) (carries, known bool) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		return false, false
	}
	return hasEnv(pid, marks), true
}

// EndGroup ends the process group that pid leads: SIGTERM, then SIGKILL
// after grace, and waits (at most 10 s more) until its leader is gone. It
// returns an error when the leader is still there.
func EndGroup(pid int, grace time.Duration) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	killAt := time.Now().Add(grace)
	deadline := killAt.Add(endDeadline)
	killed := false
	for Alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d is still alive after SIGKILL", pid)
		}
		if !killed && time.Now().After(killAt) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			killed = true
		}
		time.Sleep(endPoll)
	}
	return nil
}
