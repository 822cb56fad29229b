package proc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The attacks of a step on its supervisor (the hostile review of the
// supervisor pool, docs/running.md "Signals"): each must leave the other
// steps, and the report of the step itself, as they would be without it.

// probeScript prints what a step inherits that a step could have changed
// on its supervisor: the file size rlimit, the nice value (field 19 of
// /proc/PID/stat), the CPU affinity and the OOM score adjustment.
const probeScript = `ulimit -f; cut -d' ' -f19 /proc/$$/stat; grep Cpus_allowed_list /proc/$$/status; cat /proc/$$/oom_score_adj`

// TestStepCannotTaintNextStep: a step that lowers its supervisor's file
// size limit, renices it, pins it to one CPU and raises its OOM score
// adjustment leaves the next step with what a step started directly by
// cadence has.
func TestStepCannotTaintNextStep(t *testing.T) {
	useSupervisor(t)
	env := []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin"}
	var want strings.Builder
	if res, err := run(context.Background(), Cmd{Direct: true, Path: "/bin/sh", Args: []string{"-c", probeScript}, Env: env, Stdout: &want}); err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	var out strings.Builder
	taint := `set -e
prlimit --pid $PPID --fsize=0
renice -n 10 -p $PPID >/dev/null
taskset -a -p 1 $PPID >/dev/null
echo 500 > /proc/$PPID/oom_score_adj
` + probeScriptOf("$PPID")
	res, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", taint}, Env: env, Stdout: &out, Stderr: os.Stderr})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the tainting step: %+v, %v", res, err)
	}
	if out.String() == want.String() {
		t.Fatalf("the tainting step changed nothing on its supervisor (%q): nothing is proved", out.String())
	}
	var next strings.Builder
	if res, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", probeScript}, Env: env, Stdout: &next}); err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	if next.String() != want.String() {
		t.Errorf("the next step inherited\n%s\nwant cadence's\n%s", next.String(), want.String())
	}
}

// probeScriptOf is probeScript about the process pid (a shell word).
func probeScriptOf(pid string) string {
	return fmt.Sprintf(`prlimit --pid %[1]s --fsize --noheadings --output SOFT; cut -d' ' -f19 /proc/%[1]s/stat; grep Cpus_allowed_list /proc/%[1]s/status; cat /proc/%[1]s/oom_score_adj`, pid)
}

// TestLeftLoopCannotStopOtherSteps: a setsid loop that a step leaves
// behind, sending SIGHUP, SIGTERM and SIGUSR1 to every supervisor it
// finds, neither ends nor stops another step running meanwhile, and dies
// with its own step's tree. It looks only among this test process's
// children (pgrep -P): other test binaries run supervisors meanwhile,
// and one still starting (before it catches signals) would die of it.
func TestLeftLoopCannotStopOtherSteps(t *testing.T) {
	useSupervisor(t)
	dir := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin"}
	type ran struct {
		res Result
		err error
	}
	other := make(chan ran, 1)
	started := make(chan struct{})
	go func() {
		// Waits (at most 20 s) for the release file, then exits 3.
		res, err := run(context.Background(), Cmd{Path: "/bin/sh", Dir: dir, Env: env,
			Args:    []string{"-c", `i=0; while [ ! -e release ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; exit 3`},
			Started: func(int) { close(started) }})
		other <- ran{res, err}
	}()
	select {
	case <-started:
	case r := <-other:
		t.Fatalf("the other step did not start: %+v, %v", r.res, r.err)
	}
	// The pattern's bracket keeps the loop's own command line from matching.
	loop := `setsid sh -c 'while :; do for p in $(pgrep -P ` + strconv.Itoa(os.Getpid()) + ` -f -- "__supervis[e]"); do kill -HUP $p; kill -TERM $p; kill -USR1 $p; echo $p >> sent; done; sleep 0.01; done' </dev/null >/dev/null 2>&1 &
echo $! > loop.pid
i=0; while [ $(wc -l < sent 2>/dev/null || echo 0) -lt 10 ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
exit 0`
	if _, err := run(context.Background(), Cmd{Path: "/bin/sh", Dir: dir, Env: env, Args: []string{"-c", loop}}); err != nil {
		t.Fatal(err)
	}
	allGone(t, map[string]int{"loop": waitFile(t, filepath.Join(dir, "loop.pid"))})
	sent, _ := os.ReadFile(filepath.Join(dir, "sent"))
	if strings.Count(string(sent), "\n") < 2 {
		t.Fatalf("the loop signalled %q: nothing is proved", sent)
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-other:
		if r.err != nil || r.res.ExitCode != 3 || r.res.Signal != 0 || r.res.Stopped {
			t.Errorf("the other step: %+v, %v; want exit 3", r.res, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the other step never ended")
	}
}

// TestForgedExitReport: a step that writes an exit report of its own to
// its supervisor's status channel (through /proc/PPID/fd/3, or a copy of
// the descriptor taken with pidfd_getfd) and exits 1 is reported exit 1.
func TestForgedExitReport(t *testing.T) {
	useSupervisor(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, script := range map[string]string{
		"proc fd":     `printf 'exit 0 0\nexit 0' > /proc/$PPID/fd/3; exit 1`,
		"pidfd_getfd": `"$1" forge-report $PPID; exit 1`,
	} {
		res, err := run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"-c", script, "sh", exe},
			Env: []string{"PATH=/usr/bin:/bin"}, Stderr: &strings.Builder{}})
		if err != nil || res.ExitCode != 1 || res.Signal != 0 || res.LimitHit != "" {
			t.Errorf("%s: %+v, %v; want exit 1", name, res, err)
		}
	}
}

// forgeReport (the test binary as forge-report PID) takes a copy of fd 3
// of the process PID with pidfd_getfd and writes a forged exit report
// into it, ending on a partial line.
func forgeReport(args []string) int {
	var pid int
	if _, err := fmt.Sscan(args[0], &pid); err != nil {
		return 2
	}
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidfd_open:", err)
		return 1
	}
	fd, err := unix.PidfdGetfd(pfd, statusFD, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pidfd_getfd:", err)
		return 1
	}
	_, err = syscall.Write(fd, []byte("limit memory\nexit 0 0\nexit 0"))
	fmt.Fprintln(os.Stderr, "forged:", err)
	return 0
}
