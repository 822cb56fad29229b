package proc

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitFile waits up to 30 s for path to hold a line and returns it as a
// number.
func waitFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was never written", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// allGone waits up to 10 s for every pid to be gone (or a zombie) and
// returns how long it took, or fails naming the survivors.
func allGone(t *testing.T, pids map[string]int) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(10 * time.Second)
	for {
		var left []string
		for name, pid := range pids {
			if s, ok := readStat(pid); ok && !s.dead() {
				left = append(left, name+" "+strconv.Itoa(pid))
			}
		}
		if len(left) == 0 {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("still alive 10 s later: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The tree of a step: a background child in the step's group, and a daemon
// (setsid) with a child of its own, out of the group.
const treeScript = `sleep 60 & echo $! > bg.pid
setsid sh -c 'sleep 60 & echo $! > daemon-child.pid; echo $$ > daemon.pid; wait' &
wait`

// startTreeCadence starts the test binary as command (fake-cadence,
// service-cadence: a cadence that runs treeScript in dir under a
// supervisor and prints "step PID") and waits for the step's tree: the
// pids of the step ("step"), its background child and its setsid daemon
// with the daemon's child, by name. The cadence is killed when the test
// ends.
func startTreeCadence(t *testing.T, command, dir string) (*exec.Cmd, map[string]int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cad := exec.Command(exe, command, treeScript, dir)
	stdout, err := cad.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cad.Stderr = os.Stderr
	if err := cad.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cad.Process.Kill(); _ = cad.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	step, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "step "))
	if err != nil || step <= 0 {
		t.Fatalf("%s said %q, %v", command, line, err)
	}
	pids := map[string]int{"step": step}
	for _, f := range []string{"bg", "daemon", "daemon-child"} {
		pids[f] = waitFile(t, filepath.Join(dir, f+".pid"))
	}
	return cad, pids
}

// TestCadenceKilledTakesTree: kill -9 of a cadence (the test binary as
// fake-cadence) that runs a supervised step: within a generous deadline no
// process of the step's tree is left, the setsid daemon and its child
// included.
func TestCadenceKilledTakesTree(t *testing.T) {
	dir := t.TempDir()
	cad, pids := startTreeCadence(t, "fake-cadence", dir)
	step := pids["step"]
	sup := children(cad.Process.Pid)
	if len(sup) != 1 {
		t.Fatalf("fake cadence has children %v, want its one supervisor", sup)
	}
	pids["supervisor"] = sup[0]
	if d, _ := readStat(pids["daemon"]); d.pgrp == step {
		t.Fatal("the daemon did not leave the step's group: nothing is proved")
	}
	if err := cad.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cad.Wait()
	took := allGone(t, pids)
	t.Logf("the step's tree (%v) was gone %v after cadence's kill -9", pids, took)
}

// TestExitStatusExact: a supervised step's exit code and signal are
// reported as a direct run reports them.
func TestExitStatusExact(t *testing.T) {
	useSupervisor(t)
	for _, c := range []struct {
		script string
		code   int
		sig    syscall.Signal
	}{
		{"exit 0", 0, 0},
		{"exit 7", 7, 0},
		{"exit 255", 255, 0},
		{"kill -TERM $$", -1, syscall.SIGTERM},
		{"kill -KILL $$", -1, syscall.SIGKILL},
		{"kill -SEGV $$", -1, syscall.SIGSEGV},
	} {
		res, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", c.script}})
		if err != nil || res.ExitCode != c.code || res.Signal != c.sig || res.Stopped {
			t.Errorf("%q: %+v, %v; want exit %d signal %v", c.script, res, err, c.code, c.sig)
		}
	}
	_, err := run(context.Background(), Cmd{Path: "/no/such/binary"})
	if err == nil || !strings.Contains(err.Error(), "/no/such/binary") {
		t.Errorf("a missing binary: %v", err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "noexec")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644)
	if _, err := run(context.Background(), Cmd{Path: script}); err == nil {
		t.Error("a file that is not executable started")
	}
}

// TestStepEndTakesDaemon: a supervised step that exits and leaves a daemon
// (setsid, out of its group) running ends at once, and the daemon with it.
func TestStepEndTakesDaemon(t *testing.T) {
	useSupervisor(t)
	dir := t.TempDir()
	res, err := run(context.Background(), Cmd{Path: "/bin/sh", Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Args: []string{"-c", "setsid sleep 60 & echo $! > daemon.pid; echo started"}, Stdout: &strings.Builder{}})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	if res.Duration > 30*time.Second {
		t.Errorf("the step took %v: it waited for its daemon", res.Duration)
	}
	allGone(t, map[string]int{"daemon": waitFile(t, filepath.Join(dir, "daemon.pid"))})
}

// TestHoldKeepsLock: a held file's flock lasts while the step runs, even
// once Run's caller closed its own descriptor, and ends with the step.
func TestHoldKeepsLock(t *testing.T) {
	useSupervisor(t)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "slot")
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	tryLock := func() bool {
		g, err := os.Open(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		return syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	}
	release := filepath.Join(dir, "go")
	done := make(chan error, 1)
	closed := make(chan struct{})
	go func() {
		_, err := run(context.Background(), Cmd{Path: "/bin/sh", Dir: dir, Hold: []*os.File{f},
			Args:    []string{"-c", "while [ ! -e go ]; do sleep 0.02; done"},
			Started: func(int) { f.Close(); close(closed) }})
		done <- err
	}()
	// Started closed cadence's own descriptor; the supervisor holds the lock.
	<-closed
	if tryLock() {
		t.Error("the lock was free while the step ran")
	}
	os.WriteFile(release, nil, 0o644)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !tryLock() {
		t.Error("the lock is still held after the step ended")
	}
}

// TestEndMarked: processes found by their environment mark are ended, one
// that ignores SIGTERM by SIGKILL after the grace.
func TestEndMarked(t *testing.T) {
	mark := "CADENCE_PROC_TEST_MARK=" + strconv.Itoa(os.Getpid())
	dir := t.TempDir()
	cmd := exec.Command("/bin/sh", "-c", "trap '' TERM; sleep 60 & echo $! > child.pid; wait")
	cmd.Dir, cmd.Env = dir, []string{mark, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { _ = cmd.Wait(); close(reaped) }()
	child := waitFile(t, filepath.Join(dir, "child.pid"))
	if got := Marked([]string{mark}); len(got) != 2 {
		t.Fatalf("Marked found %v, want the shell and its sleep", got)
	}
	n, err := EndMarked([]string{mark}, 200*time.Millisecond)
	if err != nil || n != 2 {
		t.Fatalf("EndMarked: %d, %v", n, err)
	}
	allGone(t, map[string]int{"shell": cmd.Process.Pid, "sleep": child})
	<-reaped
	if n, err := EndMarked([]string{mark}, time.Second); n != 0 || err != nil {
		t.Errorf("EndMarked of nothing: %d, %v", n, err)
	}
}
