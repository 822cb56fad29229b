package proc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stepParent runs `echo $PPID` (and the environment variable V and the
// folder) as a supervised step and returns the supervisor's pid and the
// rest of the output.
func stepParent(t *testing.T, ctx context.Context, dir, v string) (int, string) {
	t.Helper()
	var out strings.Builder
	res, err := Run(ctx, Cmd{Path: "/bin/sh", Dir: dir, Env: []string{"V=" + v},
		Args: []string{"-c", `echo $PPID; echo "$V"; pwd`}, Stdout: &out})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("res %+v err %v", res, err)
	}
	ppid, rest, _ := strings.Cut(out.String(), "\n")
	n, err := strconv.Atoi(ppid)
	if err != nil {
		t.Fatalf("output %q", out.String())
	}
	return n, rest
}

// TestSupervisorReused: steps one after another run under the same
// supervisor, each with its own environment and folder.
func TestSupervisorReused(t *testing.T) {
	useSupervisor(t)
	a, b := t.TempDir(), t.TempDir()
	p1, out1 := stepParent(t, context.Background(), a, "one")
	p2, out2 := stepParent(t, context.Background(), b, "two")
	if p1 != p2 {
		t.Errorf("two supervisors (%d, %d) for two steps one after another", p1, p2)
	}
	if p1 == os.Getpid() {
		t.Errorf("the step ran directly under the test")
	}
	ra, _ := filepath.EvalSymlinks(a)
	rb, _ := filepath.EvalSymlinks(b)
	if out1 != "one\n"+ra+"\n" || out2 != "two\n"+rb+"\n" {
		t.Errorf("outputs %q, %q", out1, out2)
	}
}

// TestStoppedSupervisorNotReused: the supervisor of a step that cadence
// stopped is not given the next step, and the next step runs.
func TestStoppedSupervisorNotReused(t *testing.T) {
	useSupervisor(t)
	dir := t.TempDir()
	p1, _ := stepParent(t, context.Background(), dir, "x")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { waitFile(t, filepath.Join(dir, "ppid")); cancel() }()
	res, err := Run(ctx, Cmd{Path: "/bin/sh", Dir: dir, Args: []string{"-c", "echo $PPID > ppid; sleep 60"},
		Grace: time.Second})
	if err != nil || !res.Stopped {
		t.Fatalf("res %+v err %v", res, err)
	}
	stoppedUnder := waitFile(t, filepath.Join(dir, "ppid"))
	if stoppedUnder != p1 {
		t.Errorf("the stopped step ran under %d, not the idle supervisor %d", stoppedUnder, p1)
	}
	p3, _ := stepParent(t, context.Background(), dir, "y")
	if p3 == stoppedUnder {
		t.Errorf("the supervisor of a stopped step (%d) ran the next one", p3)
	}
	allGone(t, map[string]int{"stopped supervisor": stoppedUnder})
}

// TestSupervisorReusedAfterDaemon: a step that leaves a daemon ends with
// the daemon gone, and the same supervisor then runs the next step.
func TestSupervisorReusedAfterDaemon(t *testing.T) {
	useSupervisor(t)
	dir := t.TempDir()
	var out strings.Builder
	res, err := Run(context.Background(), Cmd{Path: "/bin/sh", Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		Args: []string{"-c", "echo $PPID; setsid sleep 60 & echo $! > daemon.pid"}, Stdout: &out})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	first, _ := strconv.Atoi(strings.TrimSpace(out.String()))
	if s, ok := readStat(waitFile(t, filepath.Join(dir, "daemon.pid"))); ok && !s.dead() {
		t.Errorf("the daemon outlived its step")
	}
	if p, _ := stepParent(t, context.Background(), dir, "z"); p != first {
		t.Errorf("next step under %d, want the same supervisor %d", p, first)
	}
}

// TestSupervisorGoneIdle: an idle supervisor that died (killed by someone)
// is not handed a step: the step runs under a new one.
func TestSupervisorGoneIdle(t *testing.T) {
	useSupervisor(t)
	dir := t.TempDir()
	p1, _ := stepParent(t, context.Background(), dir, "a")
	if err := syscall.Kill(p1, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Once reaped: every thread of it is gone, its socket with them.
	pool.mu.Lock()
	idle := append([]*pooled{}, pool.idle...)
	pool.mu.Unlock()
	if len(idle) != 1 || idle[0].cmd.Process.Pid != p1 {
		t.Fatalf("idle supervisors %v, want %d", idle, p1)
	}
	<-idle[0].dead
	var out strings.Builder
	res, err := Run(context.Background(), Cmd{Path: "/bin/sh", Dir: dir, Args: []string{"-c", "echo ok"}, Stdout: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "ok\n" {
		t.Fatalf("res %+v err %v out %q", res, err, out.String())
	}
}

// TestMissingFolder: a supervised step whose folder is gone does not
// start, the error names the folder, and the supervisor serves the next.
func TestMissingFolder(t *testing.T) {
	useSupervisor(t)
	dir := filepath.Join(t.TempDir(), "gone")
	res, err := Run(context.Background(), Cmd{Path: "/bin/sh", Dir: dir, Args: []string{"-c", "true"}})
	if err == nil || !strings.Contains(err.Error(), dir) || res.ExitCode != -1 {
		t.Fatalf("res %+v err %v, want an error naming %s", res, err, dir)
	}
	if res, err := Run(context.Background(), Cmd{Path: "/bin/sh", Dir: t.TempDir(), Args: []string{"-c", "exit 3"}}); err != nil || res.ExitCode != 3 {
		t.Fatalf("next step: %+v %v", res, err)
	}
}
