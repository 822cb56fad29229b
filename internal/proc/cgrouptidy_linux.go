package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stepCgroupPrefix begins the name of every step cgroup a supervisor
// makes (makeStepCgroup): cadence-step-<the supervisor's pid>.
const stepCgroupPrefix = "cadence-step-"

// TidyStepCgroups removes the step cgroups that supervisors gone without
// cleaning up left behind (a supervisor killed with SIGKILL, with or
// without its cadence): the folders named cadence-step-<pid>, below the
// cgroup this process runs in, in each hierarchy that holds the memory or
// pids controller, whose supervisor <pid> is no longer running (no live
// process of that pid runs as a supervisor). A live supervisor's cgroup
// is never touched, whoever's it is.
//
// A left cgroup that still holds processes is emptied first only when
// every one of them carries every entry of marks (the wave's, "KEY=value",
// as Marked reads them): they get SIGKILL, and it waits for them (at most
// 10 s). One with an unmarked process, or any with no marks given, is
// kept and named in kept with why. removed are the folders removed; with
// dry, those it would remove, and nothing is killed or removed.
func TidyStepCgroups(marks []string, dry bool) (removed, kept []string) {
	for _, dir := range LeftStepCgroups() {
		if why := emptyCgroup(dir, marks, dry); why != "" {
			kept = append(kept, dir+": "+why)
			continue
		}
		if dry {
			removed = append(removed, dir)
			continue
		}
		if err := rmdirBusy(dir); err != nil {
			kept = append(kept, fmt.Sprintf("%s: %v", dir, err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, kept
}

// LeftStepCgroups lists the step cgroups whose supervisor is gone (what
// TidyStepCgroups looks at), whatever they hold.
func LeftStepCgroups() []string {
	var out []string
	for _, parent := range stepCgroupParents() {
		dirs, _ := filepath.Glob(filepath.Join(parent, stepCgroupPrefix+"*"))
		for _, dir := range dirs {
			pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), stepCgroupPrefix))
			if err == nil && pid > 0 && !isSupervisor(pid) {
				out = append(out, dir)
			}
		}
	}
	return out
}

// stepCgroupParents are the folders step cgroups are made in (locate),
// each once.
func stepCgroupParents() []string {
	var out []string
	for _, ctrl := range []string{ctrlMemory, ctrlPids} {
		if place, _ := locate(ctrl); place.mech != MechanismNone && !slices.Contains(out, place.parent) {
			out = append(out, place.parent)
		}
	}
	return out
}

// isSupervisor reports whether pid runs as a step's supervisor (its
// second argument is SupervisorCommand).
func isSupervisor(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := bytes.Split(b, []byte{0})
	return len(args) > 1 && string(args[1]) == SupervisorCommand
}

// emptyCgroup ends the processes of the cgroup dir when they all carry
// marks (unless dry), and says why it cannot ("" once it is empty, or
// with dry, when it could be emptied).
func emptyCgroup(dir string, marks []string, dry bool) string {
	procs := cgroupProcs(dir)
	if len(procs) == 0 {
		return ""
	}
	if len(marks) == 0 {
		return fmt.Sprintf("it holds processes %v", procs)
	}
	for _, pid := range procs {
		if !hasEnv(pid, marks) {
			return fmt.Sprintf("it holds processes %v, not all of them marked %v", procs, marks)
		}
	}
	if dry {
		return ""
	}
	deadline := time.Now().Add(endDeadline)
	for len(procs) > 0 {
		if time.Now().After(deadline) {
			return fmt.Sprintf("processes %v are still alive after SIGKILL", procs)
		}
		for _, pid := range procs {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(endPoll)
		procs = cgroupProcs(dir)
	}
	return ""
}

// cgroupProcs lists the processes of the cgroup dir (its cgroup.procs).
func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// rmdirBusy removes the cgroup dir, trying for a second while the kernel
// still counts a task that is exiting (EBUSY).
func rmdirBusy(dir string) error {
	deadline := time.Now().Add(time.Second)
	for {
		err := syscall.Rmdir(dir)
		if err == nil || err == syscall.ENOENT {
			return nil
		}
		if err != syscall.EBUSY || time.Now().After(deadline) {
			return &os.PathError{Op: "rmdir", Path: dir, Err: err}
		}
		time.Sleep(10 * time.Millisecond)
	}
}
