package claude

import (
	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
)

// killMarked kills every process whose environment carries
// agent.SessionMark=session (CADENCE_SESSION): what a session left behind
// that its process group did not take down (Claude Code runs its Bash tool
// in a process group of its own, so a killed claude leaves that shell and
// its children running; the step supervisor takes them down already where
// it runs). It is proc.EndMarked with no grace (SIGTERM, SIGKILL at its
// next look, and it waits until they are gone) and returns how many it found. Processes of
// other users, and systems without /proc, are out of its reach.
func killMarked(session string) int {
	if session == "" {
		return 0
	}
	n, _ := proc.EndMarked([]string{agent.SessionMark + "=" + session}, 0)
	return n
}
