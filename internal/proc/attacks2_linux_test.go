package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// More attacks of an unboxed step (sandbox = false, or no bubblewrap) on
// its supervisor and on cadence, through pidfd_getfd, which the kernel
// grants any process of the same user where Yama is absent or at 0.

// holdChannel (the test binary as hold-channel PID) takes a copy of the
// supervisor PID's end of its channel (fd 3), kills the supervisor with
// SIGKILL and sleeps on, holding the copy, for at most 60 s.
func holdChannel(args []string) int {
	pid, _ := strconv.Atoi(args[0])
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidfd_open:", err)
		return 1
	}
	if _, err := unix.PidfdGetfd(pfd, statusFD, 0); err != nil {
		fmt.Fprintln(os.Stderr, "pidfd_getfd:", err)
		return 1
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(60 * time.Second)
	return 0
}

// TestRunEndsWhenStepHoldsKilledSupervisorsChannel: a step that keeps a
// copy of its supervisor's end of the channel and kills the supervisor
// does not keep Run from returning: the step's context ends after 1 s,
// and Run must return (and end the step's group) within seconds, not
// wait for the copy to be closed.
func TestRunEndsWhenStepHoldsKilledSupervisorsChannel(t *testing.T) {
	useSupervisor(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	step := make(chan int, 1)
	type ran struct {
		res Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := run(ctx, Cmd{Path: "/bin/sh", Args: []string{"-c", `exec "$1" hold-channel $PPID`, "sh", exe},
			Env: []string{"PATH=/usr/bin:/bin"}, Grace: 100 * time.Millisecond, Stderr: os.Stderr,
			Started: func(pid int) { step <- pid }})
		done <- ran{res, err}
	}()
	pid := <-step
	select {
	case r := <-done:
		t.Logf("Run returned %+v, %v", r.res, r.err)
		allGone(t, map[string]int{"step": pid})
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-done
		t.Fatal("Run had not returned 15 s after the step killed its supervisor (its context ended after 1 s): it waits for the step's copy of the channel to close")
	}
}

// stealReports (the test binary as steal-reports CADENCE-PID) waits
// 100 ms (for the other step to start), stops cadence (SIGSTOP), takes a
// copy of each socket cadence holds (pidfd_getfd), and consumes from them
// the first supervisor message that starts with "exit " (another step's
// exit report; its own comes only after it ended), for at most 10 s;
// then it lets cadence go on (SIGCONT).
func stealReports(args []string) int {
	pid, _ := strconv.Atoi(args[0])
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidfd_open:", err)
		return 1
	}
	time.Sleep(100 * time.Millisecond)
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	defer syscall.Kill(pid, syscall.SIGCONT)
	var fds []int
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, e := range ents {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if !strings.HasPrefix(target, "socket:") {
			continue
		}
		n, _ := strconv.Atoi(e.Name())
		if fd, err := unix.PidfdGetfd(pfd, n, 0); err == nil {
			fds = append(fds, fd)
		}
	}
	buf := make([]byte, msgMax)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, fd := range fds {
			if m, _, err := unix.Recvfrom(fd, buf, unix.MSG_PEEK|unix.MSG_DONTWAIT); err == nil && strings.HasPrefix(string(buf[:m]), "exit ") {
				_, _, _ = unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
				fmt.Fprintf(os.Stderr, "stole %q\n", buf[:m])
				return 0
			}
		}
	}
	return 1
}

// twoStepsCadence (the test binary as two-steps-cadence) is a cadence
// that runs two supervised steps at once: the thief (steal-reports of its
// own pid), and a step that fails (exit 1) after 0.3 s; it prints the
// failing step's result as "victim EXIT SIGNAL ERROR".
func twoStepsCadence(args []string) int {
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	sup := &Supervisor{Exe: exe, Argv0: "proc.test"}
	env := []string{"PATH=/usr/bin:/bin"}
	thief := make(chan struct{})
	go func() {
		defer close(thief)
		_, _ = Run(context.Background(), Cmd{Supervisor: sup, Path: exe, Args: []string{"steal-reports", strconv.Itoa(os.Getpid())}, Env: env, Stderr: os.Stderr})
	}()
	res, err := Run(context.Background(), Cmd{Supervisor: sup, Path: "/bin/sh", Args: []string{"-c", "sleep 0.3; exit 1"}, Env: env})
	fmt.Printf("victim %d %d %v\n", res.ExitCode, int(res.Signal), err)
	<-thief
	return 0
}

// TestStolenExitReportIsNotSuccess: a step that takes another step's exit
// report off cadence's end of its channel (a copy through pidfd_getfd)
// does not make that failing step (exit 1) pass: a supervisor that ended
// without a report cadence received is not a step that exited 0.
func TestStolenExitReportIsNotSuccess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "two-steps-cadence")
	cmd.Dir = t.TempDir()
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := strings.TrimSpace(string(out))
	if strings.HasPrefix(got, "victim 0 0 <nil>") {
		t.Fatalf("the failing step (exit 1) whose report another step stole was reported %q: a success", got)
	}
	if !strings.HasPrefix(got, "victim 1 0 <nil>") {
		t.Logf("the failing step was reported %q", got)
	}
}

// holdCadenceEnd (the test binary as hold-cadence-end CADENCE-PID DIR)
// takes a copy of every socket cadence holds (its ends of the supervisors'
// channels among them), writes its pid to DIR/holder.pid and sleeps 60 s.
func holdCadenceEnd(args []string) int {
	pid, _ := strconv.Atoi(args[0])
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidfd_open:", err)
		return 1
	}
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, e := range ents {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		fd, _ := strconv.Atoi(e.Name())
		if strings.HasPrefix(target, "socket:") {
			if _, err := unix.PidfdGetfd(pfd, fd, 0); err == nil {
				n++
			}
		}
	}
	if n == 0 {
		fmt.Fprintln(os.Stderr, "hold-cadence-end: no socket taken")
		return 1
	}
	_ = os.WriteFile(filepath.Join(args[1], "holder.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	time.Sleep(60 * time.Second)
	return 0
}

// TestCadenceKilledTakesTreeOfStepHoldingCadencesEnd: a step that took a
// copy of cadence's end of its supervisor's channel (pidfd_getfd) still
// dies with cadence: after kill -9 of cadence, the supervisor must not
// wait for an end of file that the step's copy keeps from coming.
func TestCadenceKilledTakesTreeOfStepHoldingCadencesEnd(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`exec '%s' hold-cadence-end "$(cut -d' ' -f4 /proc/$PPID/stat)" '%s'`, exe, dir)
	cad := exec.Command(exe, "fake-cadence", script, dir)
	cad.Stderr = os.Stderr
	if err := cad.Start(); err != nil {
		t.Fatal(err)
	}
	defer cad.Process.Kill()
	holder := waitFile(t, filepath.Join(dir, "holder.pid"))
	sup := children(cad.Process.Pid)
	if len(sup) != 1 {
		t.Fatalf("fake cadence has children %v, want its one supervisor", sup)
	}
	if err := cad.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cad.Wait()
	allGone(t, map[string]int{"step holding cadence's end": holder, "supervisor": sup[0]})
}
