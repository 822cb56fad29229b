package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidsParent is where step cgroups of the processes limit go, or the
// test is skipped.
func pidsParent(t *testing.T) string {
	t.Helper()
	needEnforced(t, LimitProcesses, Limits{Processes: 64})
	place, _ := locate(ctrlPids)
	return place.parent
}

// TestTidyStepCgroupsAfterSupervisorKilled: a supervisor killed with
// SIGKILL in the middle of its step leaves its step cgroup; TidyStepCgroups
// with the step's marks ends what of the step is left in it and removes it.
func TestTidyStepCgroupsAfterSupervisorKilled(t *testing.T) {
	parent := pidsParent(t)
	useSupervisor(t)
	mark := "CADENCE_TEST_TIDY=" + filepath.Base(t.TempDir())
	t.Cleanup(func() { _, _ = EndMarked([]string{mark}, 0) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	started, done := make(chan int, 1), make(chan struct{})
	go func() {
		defer close(done)
		_, _ = run(ctx, Cmd{Path: "/bin/sh", Args: []string{"-c", "sleep 60 & sleep 60"}, Env: []string{"PATH=/usr/bin:/bin", mark},
			Limits: Limits{Processes: 64}, Started: func(pid int) { started <- pid }})
	}()
	var step int
	select {
	case step = <-started:
	case <-ctx.Done():
		t.Fatal("the step did not start")
	}
	st, ok := readStat(step)
	if !ok || !isSupervisor(st.ppid) {
		t.Fatalf("the step's parent %d is not its supervisor", st.ppid)
	}
	cg := filepath.Join(parent, stepCgroupPrefix+strconv.Itoa(st.ppid))
	if _, err := os.Stat(cg); err != nil {
		t.Fatalf("no step cgroup: %v", err)
	}
	if err := syscall.Kill(st.ppid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	for deadline := time.Now().Add(10 * time.Second); isSupervisor(st.ppid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed supervisor is still there")
		}
	}
	if _, err := os.Stat(cg); err != nil {
		t.Fatalf("the killed supervisor left no cgroup (%v): nothing to test", err)
	}
	removed, kept := TidyStepCgroups([]string{mark}, false)
	if !slices.Contains(removed, cg) {
		t.Fatalf("removed %v, kept %v; want %s removed", removed, kept, cg)
	}
	if _, err := os.Stat(cg); err == nil {
		t.Fatalf("%s is still there", cg)
	}
	if left := Marked([]string{mark}); len(left) > 0 {
		t.Errorf("processes %v of the step are left", left)
	}
}

// TestTidyStepCgroupsKeepsUnmarked: a left step cgroup (its supervisor
// gone) is emptied and removed when its processes carry the marks; one
// holding a process without them is kept, the process untouched; a live
// supervisor's (here, a name whose pid is a running supervisor) is
// never looked at.
func TestTidyStepCgroupsKeepsUnmarked(t *testing.T) {
	parent := pidsParent(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mark := "CADENCE_TEST_TIDY=" + filepath.Base(t.TempDir())
	left := func(name string, env []string) (string, *exec.Cmd) {
		dir := filepath.Join(parent, stepCgroupPrefix+name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Rmdir(dir) })
		if env == nil {
			return dir, nil
		}
		cmd := exec.Command("sleep", "60")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(cmd.Process.Pid)); err != nil {
			t.Fatal(err)
		}
		return dir, cmd
	}
	pid := strconv.Itoa(gone.ProcessState.Pid())
	empty, _ := left(pid, nil)
	marked, _ := left(pid+"1", []string{"PATH=/usr/bin:/bin", mark})
	unmarked, other := left(pid+"2", []string{"PATH=/usr/bin:/bin"})
	// TidyStepCgroups looks at the whole machine: other tests' supervisors
	// leave cgroups meanwhile. Only this test's three are judged.
	ours := func(dirs []string) []string {
		var out []string
		for _, d := range dirs {
			for _, o := range []string{empty, marked, unmarked} {
				if d == o || strings.HasPrefix(d, o+" ") || strings.HasPrefix(d, o+":") {
					out = append(out, d)
				}
			}
		}
		return out
	}
	removed, kept := TidyStepCgroups([]string{mark}, false)
	removed, kept = ours(removed), ours(kept)
	slices.Sort(removed)
	if want := []string{empty, marked}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	if len(kept) != 1 || filepath.Dir(unmarked) != parent || kept[0][:len(unmarked)] != unmarked {
		t.Errorf("kept %v, want %s", kept, unmarked)
	}
	if _, err := os.Stat(unmarked); err != nil {
		t.Errorf("the cgroup of an unmarked process was removed: %v", err)
	}
	if syscall.Kill(other.Process.Pid, 0) != nil {
		t.Error("the unmarked process was killed")
	}
}
