//go:build linux

package executor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// startMarked starts `sleep 60` under a shell in a session of its own
// with env, as a step an earlier, killed apply left behind.
func startMarked(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command("/bin/sh", "-c", "sleep 60 & wait")
	c.Env = append(env, "PATH=/usr/bin:/bin")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go c.Wait()
	t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
	// Until the shell started its sleep, its environment may not be its own.
	deadline := time.Now().Add(30 * time.Second)
	for len(proc.Marked(env)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the marked processes never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return c
}

// TestLeftoversEndedThenReplayed: processes an earlier apply left running
// are ended, found by the wave's mark (lot a) or, for a step recorded by a
// cadence that predates the mark, by its recorded pid and its lot's marks
// (lot b); then both lots run, instead of being refused. A live recorded
// pid that is not the lot's (pid reuse) is left alone (lot c).
func TestLeftoversEndedThenReplayed(t *testing.T) {
	h := newHarness(t, `wave "w" {}
lot "a" {
  run = "true"
}
lot "b" {
  run = "true"
}
lot "c" {
  run = "true"
}
`)
	store, err := state.OpenStore(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	lineage := "lineage-" + filepath.Base(h.dir)
	a := startMarked(t, "CADENCE_WAVE=w", "CADENCE_WAVE_ID="+lineage, "CADENCE_LOT=a")
	b := startMarked(t, "CADENCE_WAVE=w", "CADENCE_LOT=b")
	other := startMarked(t, "CADENCE_WAVE=w", "CADENCE_LOT=x"+filepath.Base(h.dir))
	running := func(pid int) func(*state.Lot) {
		return func(l *state.Lot) {
			l.Status = state.LotRunning
			l.Steps = []state.Step{{Kind: state.StepRun, Status: state.StepRunning, PID: pid}}
		}
	}
	err = store.UpdateWave(func(st *state.State) { st.Lineage, st.Wave = lineage, "w" })
	for id, pid := range map[string]int{"a": a.Process.Pid, "b": b.Process.Pid, "c": other.Process.Pid} {
		if err == nil {
			err = store.UpdateLot(id, running(pid))
		}
	}
	if err == nil {
		err = store.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("res %+v err %v", res, err)
	}
	for id, c := range map[string]*exec.Cmd{"a": a, "b": b} {
		if proc.Alive(c.Process.Pid) {
			t.Errorf("lot %s: the earlier apply's process %d is still alive", id, c.Process.Pid)
		}
		if st := h.status(id); st != state.LotDone {
			t.Errorf("lot %s is %s, want done", id, st)
		}
	}
	if !proc.Alive(other.Process.Pid) {
		t.Error("a process that is not the lot's was ended")
	}
}

// TestLeftCgroupRemovedOnResume: a step supervisor killed with SIGKILL
// leaves its step cgroup (limits); the next apply of the wave ends what
// of the step is left in it (the wave's mark) and removes it.
func TestLeftCgroupRemovedOnResume(t *testing.T) {
	for _, e := range proc.Enforced(proc.Limits{Processes: 64}) {
		if e.Mechanism != proc.MechanismCgroup2 && e.Mechanism != proc.MechanismCgroup1 {
			t.Skipf("the processes limit has no cgroup here: %s", e.Why)
		}
	}
	done := filepath.Join(t.TempDir(), "go")
	h := newHarness(t, `wave "w" {}
lot "a" {
  run     = "[ -e `+done+` ] || sleep 60"
  timeout = "2m"
  limits  = { processes = 64 }
}
`)
	useSupervisor(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = h.run(ctx, planner.Options{})
	}()
	var step int
	for deadline := time.Now().Add(30 * time.Second); step == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the step never recorded its pid")
		}
		st, _, err := state.Read(filepath.Join(h.dir, "wave.state.json"))
		if err == nil && st.Lots["a"] != nil && len(st.Lots["a"].Steps) > 0 {
			step = st.Lots["a"].Steps[0].PID
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", step))
	if err != nil {
		t.Fatal(err)
	}
	var sup int
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	fmt.Sscan(fields[1], &sup)
	name := fmt.Sprintf("cadence-step-%d", sup)
	left := func() string {
		for _, d := range proc.LeftStepCgroups() {
			if filepath.Base(d) == name {
				return d
			}
		}
		return ""
	}
	if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var cg string
	for deadline := time.Now().Add(10 * time.Second); cg == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the killed supervisor %d left no cgroup %s: nothing to test", sup, name)
		}
		cg = left()
	}
	cancel()
	<-ended
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("the next apply: %+v, %v", res, err)
	}
	if _, err := os.Stat(cg); err == nil {
		t.Fatalf("the next apply left the step cgroup %s", cg)
	}
}
