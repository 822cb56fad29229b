package step

import (
	"fmt"
	"io"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/spec"
)

// stepLimits are a lot's limits (spec.Lot.Limits) as the step supervisor
// applies them to the tree of each of its command steps and agent
// sessions.
func stepLimits(l spec.Limits) proc.Limits {
	return proc.Limits{Memory: l.Memory, Processes: l.Processes, OpenFiles: l.OpenFiles, FileSize: l.FileSize, CPUTime: l.CPUTime}
}

// limitCause says which of the lot's limits l a step (what: "run step",
// "test step", "setup", "session") reached, or that it left the
// cgroup that enforced them, and that its processes were ended; it is the
// step's cause and, for a command step, the last line of its log.
func limitCause(what string, l spec.Limits, hit proc.Limit) string {
	var set string
	switch hit {
	case proc.LimitLeftCgroup:
		return what + " left its cgroup (its limits could not hold): its processes were ended"
	case proc.LimitMemory:
		set = fmt.Sprintf("memory = %q", spec.FormatBytes(l.Memory))
	case proc.LimitProcesses:
		set = fmt.Sprintf("processes = %d", l.Processes)
	case proc.LimitFileSize:
		set = fmt.Sprintf("file_size = %q", spec.FormatBytes(l.FileSize))
	case proc.LimitCPUTime:
		set = fmt.Sprintf("cpu_time = %q", spec.FormatDuration(l.CPUTime))
	default:
		set = string(hit)
	}
	return fmt.Sprintf("%s reached its %s limit (%s): its processes were ended", what, hit, set)
}

// timeoutCause says a step (what) ran past its timeout d and that its
// processes were ended.
func timeoutCause(what string, d time.Duration) string {
	return fmt.Sprintf("%s timed out after %s: its processes were ended", what, spec.FormatDuration(d))
}

// noteInLog ends a step's log with cadence's line on how the step ended
// (a limit it reached, its timeout), so that cadence logs says it too.
// The log is best effort here: its own write errors are the log's.
func noteInLog(w io.Writer, cause string) {
	_, _ = io.WriteString(w, "\ncadence: "+cause+"\n")
}
