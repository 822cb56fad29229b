package render

import (
	"bufio"
	"sort"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/planner"
)

// writeExecutor writes where the steps run (docs/remote.md): the engine
// and queue, what leaves the machine, then, when the engine was asked, one
// line per live worker (agent CLI versions, toolchains, free slots) and
// the pool. Nothing for a plan whose steps all run on this machine.
func writeExecutor(bw *bufio.Writer, x *planner.ExecutorPlan) {
	if x == nil {
		return
	}
	bw.WriteString("Executor: " + x.Kind + " " + Visible(x.URL, false) + " queue " + x.Queue +
		" (remote: " + strings.Join(x.Remote, ", ") + "; lease " + x.Lease.String() + ")\n")
	if !x.Asked {
		return
	}
	if len(x.Workers) == 0 {
		bw.WriteString("  Workers: none live\n")
	}
	for _, w := range x.Workers {
		bw.WriteString("  Worker " + Visible(w.ID, false) + ": " + workerLine(w) + "\n")
	}
	bw.WriteString("  Pool: " + strconv.Itoa(x.Pool.Free) + " of " + strconv.Itoa(x.Pool.Cap) + " slots free, " +
		strconv.Itoa(x.Pool.InFlight) + " in flight, " + strconv.FormatUint(x.Pool.Queued, 10) + " queued\n")
}

// workerLine is a worker's agent CLI versions, toolchains and free slots.
func workerLine(w planner.RemoteWorker) string {
	var parts []string
	kinds := make([]string, 0, len(w.Agents))
	for k := range w.Agents {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		parts = append(parts, k+" "+Visible(w.Agents[k], false))
	}
	if len(kinds) == 0 {
		parts = append(parts, "no agent CLI")
	}
	if len(w.Toolchains) > 0 {
		parts = append(parts, Visible(strings.Join(w.Toolchains, " "), false))
	}
	parts = append(parts, strconv.Itoa(w.Free)+" of "+strconv.Itoa(w.Slots)+" slots free")
	return strings.Join(parts, "; ")
}
