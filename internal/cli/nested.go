package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/cadence-run/cadence/internal/proc"
)

// waveMarks are the environment variables cadence gives every process of a
// wave's steps (executor/agent StepEnv and MarkEnv): the wave's name and id,
// the lot, and, in agent sessions, the session's id. Their names are
// repeated here, not imported, so that the check needs nothing of the
// executor.
var waveMarks = []string{"CADENCE_WAVE", "CADENCE_WAVE_ID", "CADENCE_LOT", "CADENCE_SESSION"}

// nestedWave says why apply must not start here ("" when it may): the
// process runs inside a step or session of a wave (one of waveMarks is set,
// non-empty). An agent running `cadence apply` from a session, or a
// command lot whose run command does, would start a wave inside a wave:
// sessions under the outer wave's session cap and budget unaccounted, a
// second set of worktrees and integrations racing the first. cadence
// refuses that (docs/agents.md, "No nested waves"; docs/commands.md, Exit
// codes: exit 2, refused before acting).
//
// Decision: there is no flag to override it. A flag would be one an agent
// can pass as easily as the lead. Read-only commands (plan, status, logs)
// stay allowed inside a wave. A lead who truly means to start a wave from
// a step removes the marks on purpose (`env -u CADENCE_WAVE -u
// CADENCE_WAVE_ID -u CADENCE_LOT -u CADENCE_SESSION cadence apply …`, see
// docs/agents.md, "No nested waves"); the message does not say so, since
// it is read by the agent that ran the command.
func nestedWave(getenv func(string) string) string {
	var set []string
	for _, k := range waveMarks {
		if v := getenv(k); v != "" {
			set = append(set, k+"="+v)
		}
	}
	if len(set) == 0 {
		return ""
	}
	what := "a wave"
	switch wave, lot := getenv("CADENCE_WAVE"), getenv("CADENCE_LOT"); {
	case wave != "" && lot != "":
		what = fmt.Sprintf("lot %s of wave %q", lot, wave)
	case wave != "":
		what = fmt.Sprintf("wave %q", wave)
	case lot != "":
		what = "lot " + lot + " of a wave"
	}
	where := "a step of " + what
	if getenv("CADENCE_SESSION") != "" {
		where = "an agent session of " + what
	}
	return fmt.Sprintf("this process runs inside %s (%s): a wave's sessions and steps may not start a wave (no nested waves); run cadence apply from the lead's own shell, outside the wave",
		where, strings.Join(set, ", "))
}

// stepMarkedAncestor finds a process among cadence's parents that carries a
// step's marks; a seam for tests (the real one reads /proc).
var stepMarkedAncestor = func() (int, bool) { return proc.MarkedAncestor(os.Getppid(), waveMarks) }

// fromStep says why a steering command (drop, stop, answer, hold, release)
// must not act here ("" when it may): the process carries a step's marks
// in its environment, or runs below a process that does (a step that
// cleared its environment still descends from its step). Steering is the
// lead's: a step that could stop its wave, drop or answer lots, or hold
// every wave's slots would steer the wave it runs in (docs/running.md,
// Steering a live wave). No flag overrides it, for the reason nestedWave
// gives.
func fromStep(getenv func(string) string) string {
	if why := nestedWave(getenv); why != "" {
		return strings.Replace(why, "may not start a wave (no nested waves); run cadence apply from the lead's own shell, outside the wave", "may not steer waves: steering is the lead's", 1)
	}
	if pid, ok := stepMarkedAncestor(); ok {
		return fmt.Sprintf("this process runs below process %d, which carries a wave's step marks (%s): a wave's steps may not steer waves: steering is the lead's", pid, strings.Join(waveMarks, ", "))
	}
	return ""
}
