package proc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// needEnforced skips the test where the machine cannot enforce k (no
// cgroup cadence may make with its controller), saying why.
func needEnforced(t *testing.T, k Limit, l Limits) Mechanism {
	t.Helper()
	for _, e := range Enforced(l) {
		if e.Limit == k {
			if e.Mechanism == MechanismNone {
				t.Skipf("the %s limit cannot be enforced here: %s", k, e.Why)
			}
			return e.Mechanism
		}
	}
	t.Fatalf("Enforced(%+v) says nothing of %s", l, k)
	return MechanismNone
}

// runLimited runs script under the supervisor with limits l and a 60 s
// bound, with a mark; it fails the test if anything carrying the mark is
// left once Run returned.
func runLimited(t *testing.T, script string, l Limits) Result {
	t.Helper()
	useSupervisor(t)
	dir := t.TempDir()
	mark := "CADENCE_TEST_LIMITS=" + filepath.Base(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t.Cleanup(func() { _, _ = EndMarked([]string{mark}, 0) })
	res, err := run(ctx, Cmd{Path: "/bin/sh", Args: []string{"-c", script}, Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin", mark}, Marks: []string{mark}, Limits: l, Grace: time.Second})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Stopped {
		t.Fatalf("the step ran into the test's own 60 s bound: %+v", res)
	}
	if left := Marked([]string{mark}); len(left) > 0 {
		t.Fatalf("processes %v of the step outlived it", left)
	}
	return res
}

// TestLimitProcessesEndsForkBomb: a step that forks without end under
// processes = 20 is ended, its whole tree with it, and the result names
// the limit.
func TestLimitProcessesEndsForkBomb(t *testing.T) {
	l := Limits{Processes: 20}
	mech := needEnforced(t, LimitProcesses, l)
	res := runLimited(t, `while :; do sleep 30 & done`, l)
	if res.LimitHit != LimitProcesses || (res.ExitCode == 0 && res.Signal == 0) {
		t.Fatalf("a fork bomb under processes = 20 ended %+v, want it ended with the processes limit named", res)
	}
	t.Logf("ended by the processes limit (%s) in %v: %+v", mech, res.Duration, res)
}

// escapeScript moves the step's shell out of its step cgroup, into the
// cgroup above it (the cgroup cadence's own processes are in), then forks
// 40 sleeps, past processes = 20: what a step that may write cgroup.procs
// (root) can do. It exits 9 when it finds no step cgroup holding it.
const escapeScript = `for f in $(find /sys/fs/cgroup -path '*/cadence-step-*' -name cgroup.procs 2>/dev/null); do
  if grep -qx $$ "$f"; then echo $$ > "${f%/*/cgroup.procs}/cgroup.procs" || exit 8; moved=1; fi
done
[ -n "$moved" ] || exit 9
i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i+1)); done
wait`

// TestLimitLeftCgroupEnded: a step that moves itself out of its step
// cgroup, then forks past its processes limit, is ended, its whole tree
// with it, and the result says it left its cgroup.
func TestLimitLeftCgroupEnded(t *testing.T) {
	l := Limits{Processes: 20}
	mech := needEnforced(t, LimitProcesses, l)
	res := runLimited(t, escapeScript, l)
	if res.LimitHit != LimitLeftCgroup || (res.ExitCode == 0 && res.Signal == 0) {
		t.Fatalf("a step that left its cgroup ended %+v, want it ended with %q named", res, LimitLeftCgroup)
	}
	t.Logf("ended for leaving its cgroup (%s) in %v: %+v", mech, res.Duration, res)
}

// TestLimitChurnStaysIn: a step that starts short-lived processes one
// after another for a few seconds, under roomy limits, runs to its end:
// processes on their way out (which cgroup v1 shows in its root cgroups)
// are not taken for processes that left the step's cgroup.
func TestLimitChurnStaysIn(t *testing.T) {
	l := Limits{Processes: 64, Memory: 256 << 20}
	needEnforced(t, LimitProcesses, l)
	res := runLimited(t, `end=$(( $(date +%s) + 3 )); while [ $(date +%s) -lt $end ]; do head -c 1M /dev/zero | cat >/dev/null; done; exit 3`, l)
	if res.LimitHit != "" || res.ExitCode != 3 {
		t.Fatalf("a step that starts short-lived processes ended %+v, want exit 3 and no limit hit", res)
	}
}

// TestLimitMemoryEndsHog: a step that holds 200 MiB under memory = 64MiB
// is ended, and the result names the limit.
func TestLimitMemoryEndsHog(t *testing.T) {
	l := Limits{Memory: 64 << 20}
	mech := needEnforced(t, LimitMemory, l)
	// tail keeps the last line whole, and /dev/zero has no newline.
	res := runLimited(t, `head -c 200M /dev/zero | tail -n 1 | wc -c`, l)
	// The OOM killer ends tail; the pipeline's last command still exits 0:
	// the named limit is what tells the step's end.
	if res.LimitHit != LimitMemory {
		t.Fatalf("a 200 MiB hog under memory = 64MiB ended %+v, want it ended with the memory limit named", res)
	}
	t.Logf("ended by the memory limit (%s) in %v: %+v", mech, res.Duration, res)
}

// TestLimitUnderMemoryRuns: a step well under its limits runs to its end
// untouched (the limits do not break an ordinary step, nor does the
// supervisor's look for processes outside its cgroup, for a second with
// a child running), and the supervisor removes the cgroup it made.
func TestLimitUnderMemoryRuns(t *testing.T) {
	l := Limits{Memory: 256 << 20, Processes: 64, OpenFiles: 256, FileSize: 1 << 20, CPUTime: time.Minute}
	needEnforced(t, LimitMemory, l)
	res := runLimited(t, `head -c 10M /dev/zero | tail -n 1 | wc -c > out; ls / >/dev/null; sh -c 'sleep 1'; exit 3`, l)
	if res.LimitHit != "" || res.ExitCode != 3 {
		t.Fatalf("a step under its limits ended %+v, want exit 3 and no limit hit", res)
	}
	for _, ctrl := range []string{ctrlMemory, ctrlPids} {
		place, _ := locate(ctrl)
		left, _ := filepath.Glob(filepath.Join(place.parent, "cadence-step-*", "cgroup.procs"))
		for _, f := range left {
			if b, err := os.ReadFile(f); err == nil && len(b) == 0 {
				t.Errorf("an empty step cgroup %s is left", filepath.Dir(f))
			}
		}
	}
}

// TestLimitFileSize: a step that writes past file_size is ended by the
// kernel's SIGXFSZ, named as the file_size limit.
func TestLimitFileSize(t *testing.T) {
	l := Limits{FileSize: 1 << 20}
	needEnforced(t, LimitFileSize, l)
	res := runLimited(t, `exec head -c 5M /dev/zero > big`, l)
	if res.LimitHit != LimitFileSize {
		t.Fatalf("a 5 MiB write under file_size = 1MiB ended %+v, want the file_size limit named", res)
	}
}

// TestLimitCPUTime: a step that spins past cpu_time is ended by SIGXCPU,
// named as the cpu_time limit.
func TestLimitCPUTime(t *testing.T) {
	l := Limits{CPUTime: time.Second}
	needEnforced(t, LimitCPUTime, l)
	res := runLimited(t, `exec sh -c 'while :; do :; done'`, l)
	if res.LimitHit != LimitCPUTime {
		t.Fatalf("a spinning step under cpu_time = 1s ended %+v, want the cpu_time limit named", res)
	}
}

// TestLimitsEncode: the supervisor's argument carries every limit back.
func TestLimitsEncode(t *testing.T) {
	for _, l := range []Limits{{}, {Memory: 1 << 30, Processes: 512, OpenFiles: 1024, FileSize: 5, CPUTime: 90 * time.Second}} {
		got, err := decodeLimits(l.encode())
		if err != nil || got != l {
			t.Errorf("decodeLimits(%q) = %+v, %v; want %+v", l.encode(), got, err, l)
		}
	}
	if _, err := decodeLimits("memory=x"); err == nil {
		t.Error("a bad limit is accepted")
	}
}
