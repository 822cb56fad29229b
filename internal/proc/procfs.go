package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// stat is what /proc/<pid>/stat says of a process: its state letter, parent
// and process group, its kernel flags (PF_*) and its start time (clock
// ticks after boot: with the pid, the process's identity).
type stat struct {
	state      string
	ppid, pgrp int
	flags      uint64
	start      uint64
}

// pfExiting is the kernel's PF_EXITING flag (linux/sched.h): the process
// is on its way out.
const pfExiting = 0x4

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
	var flags uint64
	if len(f) > 6 {
		flags, _ = strconv.ParseUint(f[6], 10, 64)
	}
	var start uint64
	if len(f) > 19 {
		start, _ = strconv.ParseUint(f[19], 10, 64)
	}
	return stat{state: f[0], ppid: ppid, pgrp: pgrp, flags: flags, start: start}, true
}

// dead reports whether a stat state letter is a zombie or a dead process.
func (s stat) dead() bool { return s.state == "Z" || s.state == "X" }

// exiting reports whether the process is dead or on its way out.
func (s stat) exiting() bool { return s.dead() || s.flags&pfExiting != 0 }

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

// maxAncestry bounds Below's walk up a process's parents.
const maxAncestry = 64

// Below reports whether the process pid descends from the process
// ancestor (or is it), walking the parents /proc shows, at most
// maxAncestry of them. known is false when /proc cannot tell: pid is not
// a process of this PID namespace (0), it or a parent is gone before the
// walk ends, or the chain is longer than the bound. A chain that reaches
// init (pid 1) or a parent outside the namespace (0) without meeting
// ancestor is known not to descend from it. An ancestor of 0 or less is
// no process: nothing is below it.
func Below(pid, ancestor int) (below, known bool) {
	if pid <= 0 {
		return false, false
	}
	for range maxAncestry {
		if ancestor > 0 && pid == ancestor {
			return true, true
		}
		if pid <= 1 {
			return false, true
		}
		s, ok := readStat(pid)
		if !ok || s.dead() {
			return false, false
		}
		pid = s.ppid
	}
	return false, false
}

// MarkedAncestor returns the nearest process among pid and its parents
// (at most maxAncestry of them, up to init) whose environment sets one of
// keys to a non-empty value (a step's marks), and whether there is one. A
// process whose environment cannot be read (gone, another user's) carries
// none; where there is no /proc, none is found.
func MarkedAncestor(pid int, keys []string) (int, bool) {
	for range maxAncestry {
		if pid <= 1 {
			return 0, false
		}
		if envHasKey(pid, keys) {
			return pid, true
		}
		s, ok := readStat(pid)
		if !ok {
			return 0, false
		}
		pid = s.ppid
	}
	return 0, false
}

// envHasKey reports whether the environment of pid sets one of keys to a
// non-empty value.
func envHasKey(pid int, keys []string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		for _, k := range keys {
			if v, ok := bytes.CutPrefix(kv, []byte(k+"=")); ok && len(v) > 0 {
				return true
			}
		}
	}
	return false
}
