package claude

import (
	"syscall"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
)

// killMarked kills every process whose environment carries
// agent.SessionMark=session (CADENCE_SESSION): what a session left behind that its process
// group did not take down (Claude Code runs its Bash tool in a process
// group of its own, so a killed claude leaves that shell and its children
// running; the step supervisor takes them down already where it runs). It
// returns how many it killed. Processes of other users, and systems
// without /proc, are out of its reach (proc.Marked).
func killMarked(session string) int {
	if session == "" {
		return 0
	}
	mark := []string{agent.SessionMark + "=" + session}
	killed := 0
	for round := 0; round < 3; round++ {
		n := 0
		for _, pid := range proc.Marked(mark) {
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
