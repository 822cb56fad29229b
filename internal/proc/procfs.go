package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// stat is what /proc/<pid>/stat says of a process: its state letter, parent
// and process group.
type stat struct {
	state      string
	ppid, pgrp int
}

// readStat reads /proc/<pid>/stat; ok is false when the process is gone
// or /proc cannot tell.
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parens.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return stat{state: f[0], ppid: ppid, pgrp: pgrp}, true
}

// dead reports whether a stat state letter is a zombie or a dead process.
func (s stat) dead() bool { return s.state == "Z" || s.state == "X" }

// pids lists the processes /proc shows (none where there is no /proc).
func pids() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// children lists the live children of parent.
func children(parent int) []int {
	var out []int
	for _, pid := range pids() {
		if s, ok := readStat(pid); ok && s.ppid == parent && !s.dead() {
			out = append(out, pid)
		}
	}
	return out
}

// hasEnv reports whether the environment of pid holds every entry of
// marks ("KEY=value"). A process whose environment cannot be read (gone,
// another user's) has none.
func hasEnv(pid int, marks []string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	env = append([]byte{0}, env...)
	if len(env) > 1 && env[len(env)-1] != 0 {
		env = append(env, 0)
	}
	for _, m := range marks {
		if !bytes.Contains(env, []byte("\x00"+m+"\x00")) {
			return false
		}
	}
	return true
}
