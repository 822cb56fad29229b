package proc

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// escapeScan is how often, at most, a supervisor whose step has a cgroup
// looks through /proc for a process of the step outside it (escaped): a
// scan reads the stat file of every process of the machine.
const escapeScan = 300 * time.Millisecond

// escaped reports whether a live process below the supervisor (every
// process of the step: the supervisor is their subreaper) is outside the
// step's cgroup, in a hierarchy that enforces a limit (paths): a step that
// may write a cgroup.procs (root, or the owner of a delegated cgroup) can
// move itself out, where its limits no longer hold. A cgroup below the
// step's own counts as inside; a process gone while it is read, as
// inside, and so is a process on its way out (PF_EXITING), which cgroup
// v1 shows in the root cgroup of every hierarchy. Once one is found, hit
// names LimitLeftCgroup.
func (c *stepCgroup) escaped() bool {
	if c == nil || len(c.paths) == 0 {
		return false
	}
	if c.left {
		return true
	}
	for _, pid := range descendants(os.Getpid()) {
		// The flags are read after the cgroup: a process that began to
		// exit in between can start nothing more.
		if !c.holds(pid) {
			if s, ok := readStat(pid); !ok || s.exiting() {
				continue
			}
			c.left = true
			return true
		}
	}
	return false
}

// holds reports whether the process pid is in the step's cgroup (or below
// it) in every hierarchy of paths, as /proc/<pid>/cgroup shows it; true
// when it cannot be read (the process is gone).
func (c *stepCgroup) holds(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return true
	}
	in := func(key, p string) bool {
		want, ok := c.paths[key]
		return !ok || p == want || strings.HasPrefix(p, want+"/")
	}
	// hierarchy-id:controller,…:path; v2's line has no controller.
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			if !in("", parts[2]) {
				return false
			}
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			if !in(ctrl, parts[2]) {
				return false
			}
		}
	}
	return true
}

// descendants lists the live processes below root, as /proc shows their
// parents at one look.
func descendants(root int) []int {
	kids := map[int][]int{}
	for _, pid := range pids() {
		if s, ok := readStat(pid); ok && !s.dead() {
			kids[s.ppid] = append(kids[s.ppid], pid)
		}
	}
	// seen guards against a cycle: /proc is not read at one instant, and
	// a pid reused meanwhile may show as its own ancestor.
	seen := map[int]bool{root: true}
	var out []int
	queue := kids[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		queue = append(queue, kids[pid]...)
	}
	return out
}
