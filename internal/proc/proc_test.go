package proc

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunExitCodeAndOutput(t *testing.T) { bothWays(t, testRunExitCodeAndOutput) }

func testRunExitCodeAndOutput(t *testing.T) {
	var out bytes.Buffer
	res, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "echo hi $FOO; exit 3"}, Env: []string{"FOO=bar"}, Stdout: &out})
	if err != nil || res.ExitCode != 3 || res.Stopped || out.String() != "hi bar\n" {
		t.Fatalf("res %+v err %v out %q", res, err, out.String())
	}
	if _, err := run(context.Background(), Cmd{Path: "/no/such/binary"}); err == nil {
		t.Error("missing binary started")
	}
}

func TestEnvIsExplicit(t *testing.T) { bothWays(t, testEnvIsExplicit) }

func testEnvIsExplicit(t *testing.T) {
	t.Setenv("CADENCE_PROC_LEAK", "1")
	var out bytes.Buffer
	run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "echo ${CADENCE_PROC_LEAK:-none}"}, Stdout: &out})
	if strings.TrimSpace(out.String()) != "none" {
		t.Errorf("parent environment leaked: %q", out.String())
	}
}

// TestStopKillsGroup checks that a cancelled command and everything it
// started (a background child that ignores SIGTERM too) are gone.
func TestStopKillsGroup(t *testing.T) { bothWays(t, testStopKillsGroup) }

func testStopKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan int, 1)
	go func() {
		for {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	script := `trap '' TERM; (trap '' TERM; sleep 60) & echo $! > ` + pidFile + `; wait`
	res, err := run(ctx, Cmd{Path: "/bin/sh", Args: []string{"-c", script}, Grace: 200 * time.Millisecond, Started: func(pid int) { started <- pid }})
	if err != nil || !res.Stopped {
		t.Fatalf("res %+v err %v", res, err)
	}
	b, _ := os.ReadFile(pidFile)
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if stat, ok := gone(child); !ok {
		t.Errorf("child %d survived: %s", child, stat)
	}
	if res.Duration > 5*time.Second {
		t.Errorf("stop took %v", res.Duration)
	}
}

// TestLeftoverChildrenKilled: a command that exits and leaves a background
// process in its group does not leave it running.
func TestLeftoverChildrenKilled(t *testing.T) { bothWays(t, testLeftoverChildrenKilled) }

func testLeftoverChildrenKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "bg.pid")
	res, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "sleep 60 & echo $! > " + pidFile}})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if stat, ok := gone(pid); !ok {
		t.Errorf("background process %d survived: %s", pid, stat)
	}
}

// gone reports whether pid has ended (is gone or a zombie), giving a
// killed process up to ten seconds to be scheduled and die on a busy
// machine; it returns the process's last /proc stat line.
func gone(pid int) (string, bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return "", true
		}
		if time.Now().After(deadline) {
			return string(stat), false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAlive(t *testing.T) { bothWays(t, testAlive) }

func testAlive(t *testing.T) {
	pids := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		run(ctx, Cmd{Path: "/bin/sleep", Args: []string{"30"}, Started: func(pid int) { pids <- pid }})
		close(done)
	}()
	pid := <-pids
	if !Alive(pid) {
		t.Error("a running group leader is not alive")
	}
	cancel()
	<-done
	if Alive(pid) {
		t.Error("a stopped process is alive")
	}
	if Alive(os.Getpid()) && os.Getpid() != syscall.Getpgrp() {
		t.Error("a process that does not lead its group counts as a step")
	}
}

// TestExtraFiles checks that the step gets Cmd.ExtraFiles as fd 3, 4, …
// and that no process but the step's keeps them: the pipe's reader sees
// its end once the step is gone.
func TestExtraFiles(t *testing.T) { bothWays(t, testExtraFiles) }

func testExtraFiles(t *testing.T) {
	r1, w1, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	held, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var out bytes.Buffer
	res, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", "echo three >&3; echo four >&4; echo five >&5 || echo none"},
		ExtraFiles: []*os.File{w1, w2}, Hold: []*os.File{held}, Stdout: &out, Stderr: io.Discard})
	w1.Close()
	w2.Close()
	if err != nil || res.ExitCode != 0 || out.String() != "none\n" {
		t.Fatalf("res %+v err %v out %q (fd 5, a held file's in the supervisor, must not be the step's)", res, err, out.String())
	}
	for _, c := range []struct {
		r    *os.File
		want string
	}{{r1, "three\n"}, {r2, "four\n"}} {
		got, err := io.ReadAll(io.LimitReader(c.r, 1<<10)) // EOF: no copy left open
		if err != nil || string(got) != c.want {
			t.Errorf("extra file: %q, %v; want %q", got, err, c.want)
		}
	}
}
