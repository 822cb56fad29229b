package claude

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"github.com/cadence-run/cadence/executor/agent"
)

// killMarked kills every process whose environment carries
// agent.SessionMark=session (CADENCE_SESSION): what a session left behind that its process
// group did not take down (Claude Code runs its Bash tool in a process
// group of its own, so a killed claude leaves that shell and its children
// running). It returns how many it killed. Processes of other users, and
// systems without /proc, are out of its reach.
func killMarked(session string) int {
	if session == "" {
		return 0
	}
	mark := []byte(agent.SessionMark + "=" + session + "\x00")
	killed := 0
	for round := 0; round < 3; round++ {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return killed
		}
		n := 0
		self := os.Getpid()
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !bytes.Contains(append(env, 0), mark) {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
		killed += n
		if n == 0 {
			break
		}
	}
	return killed
}
