//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
)

// diskFullScript runs in a mount namespace of its own (unshare -m): the
// wave's folder is a 1 MiB tmpfs, so a command lot whose output passes
// 1 MiB fills it. The first apply must stop on the full disk (exit 130,
// naming the log, the error and the free space); the state must still be
// readable (status); once the tmpfs is grown, the next apply resumes the
// lot and finishes. Each command's output and exit code go to $OUT (not
// on the tmpfs).
const diskFullScript = `
set -u
mount -t tmpfs -o size=1m tmpfs "$SMALL" || exit 99
cp "$SRC/wave.hcl" "$SMALL/wave.hcl"
cd "$SMALL"
timeout 120 cadence apply -auto-approve -no-color wave.hcl >"$OUT/apply1" 2>&1
echo $? >"$OUT/rc1"
date +%s.%N >"$OUT/end1"
stat -c %.9Y .cadence/w/a/0-run.log >"$OUT/full1"
df -k . >"$OUT/df1"
timeout 60 cadence status -no-color wave.hcl >"$OUT/status1" 2>&1
echo $? >"$OUT/rc-status1"
mount -o remount,size=64m "$SMALL"
timeout 120 cadence apply -auto-approve -no-color wave.hcl >"$OUT/apply2" 2>&1
echo $? >"$OUT/rc2"
cp wave.state.json "$OUT/state.json" 2>/dev/null
wc -c < .cadence/w/a/1-run.log >"$OUT/log1" 2>/dev/null
ls -R .cadence >"$OUT/files" 2>&1
mkdir floor && cp "$SRC/floor.hcl" floor/wave.hcl && cd floor
CADENCE_MIN_FREE=32MiB timeout 120 cadence apply -auto-approve -no-color wave.hcl >"$OUT/apply3" 2>&1
echo $? >"$OUT/rc3"
timeout 60 cadence status -no-color wave.hcl >"$OUT/status3" 2>&1
timeout 60 cadence logs -no-color wave.hcl g >"$OUT/logs3" 2>&1
exit 0
`

// TestE2EDiskFullStopsAndResumes: a full disk during a step's log is a
// machine error: apply exits 130 at once with "disk full: <log>: no space
// left on device (<free> free on <mount>)", the lot is interrupted (the
// state and journal stay readable), and the next apply with room resumes
// and finishes it. It needs a mount namespace (root, unshare -m); it is
// skipped where the machine does not allow one.
func TestE2EDiskFullStopsAndResumes(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare(1): a tmpfs in a mount namespace cannot be made here")
	}
	probe := t.TempDir()
	if out, err := exec.Command("unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs "+probe).CombinedOutput(); err != nil {
		t.Skipf("a tmpfs in a mount namespace cannot be made here (unshare -m, mount: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	src, small, out := t.TempDir(), t.TempDir(), t.TempDir()
	// 3 MB of output under a log_limit of 16MiB: written whole, it
	// cannot fit in 1 MiB; with room, the lot ends ok.
	wave := "wave \"w\" {}\nlot \"a\" {\n  run       = \"yes | head -c 3000000\"\n  log_limit = \"16MiB\"\n  timeout   = \"60s\"\n}\n"
	if err := os.WriteFile(filepath.Join(src, "wave.hcl"), []byte(wave), 0o644); err != nil {
		t.Fatal(err)
	}
	// Then, on the 64 MiB tmpfs with a floor of 32 MiB: lot f leaves
	// about 20 MiB free, so lot g (after it) must not start.
	floor := "wave \"f\" {}\nlot \"f\" {\n  run = \"head -c 40000000 /dev/zero > fill\"\n}\nlot \"g\" {\n  run        = \"true\"\n  depends_on = [lot.f]\n}\n"
	if err := os.WriteFile(filepath.Join(src, "floor.hcl"), []byte(floor), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-m", "sh", "-c", diskFullScript)
	cmd.Env = append(os.Environ(), "SRC="+src, "SMALL="+small, "OUT="+out,
		"CADENCE_HOME="+t.TempDir(), "NO_COLOR=1", noRaceExitSleep,
		"CADENCE_MIN_FREE=0", "CADENCE_WARN_FREE=0")
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the scenario: %v\n%s", err, b)
	}
	t.Logf("the scenario took %s", time.Since(start).Round(time.Millisecond))
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(out, name))
		return strings.TrimSpace(string(b))
	}
	// The figure for docs/running.md (Output and disk space): from the log's last write (the disk
	// full) to the first apply's exit. Logged, not asserted.
	if full, err1 := strconv.ParseFloat(read("full1"), 64); err1 == nil {
		if end, err2 := strconv.ParseFloat(read("end1"), 64); err2 == nil {
			t.Logf("from the full disk to the apply's exit: %.0f ms", (end-full)*1000)
		}
	}
	apply1 := read("apply1")
	if rc := read("rc1"); rc != "130" {
		t.Fatalf("first apply on a full disk: exit %s, want 130\n%s\nfiles:\n%s", rc, apply1, read("files"))
	}
	full := regexp.MustCompile(`disk full: \S*/\.cadence/w/a/0-run\.log: no space left on device \([0-9.]+ [KMG]?i?B free on \S+\)`)
	if !full.MatchString(apply1) {
		t.Errorf("first apply does not say the disk is full with the log's path and the free space:\n%s", apply1)
	}
	if rc := read("rc-status1"); rc != "0" || !strings.Contains(read("status1"), "interrupted") {
		t.Errorf("status after the full disk: exit %s, want 0 and the lot interrupted:\n%s", rc, read("status1"))
	}
	stopped := regexp.MustCompile(`(?m)^Stopped: run step: disk full: \S*/\.cadence/w/a/0-run\.log: no space left on device \([0-9.]+ [KMG]?i?B free on \S+\)`)
	if !stopped.MatchString(read("status1")) {
		t.Errorf("status after the full disk does not say the apply stopped for it, with the free space:\n%s", read("status1"))
	}
	apply2 := read("apply2")
	if rc := read("rc2"); rc != "0" {
		t.Fatalf("second apply with room: exit %s, want 0\n%s", rc, apply2)
	}
	var st state.State
	if err := json.Unmarshal([]byte(read("state.json")), &st); err != nil {
		t.Fatalf("state after the second apply: %v\nfiles:\n%s\nfirst apply:\n%s\nsecond apply:\n%s", err, read("files"), apply1, apply2)
	}
	if l := st.Lots["a"]; l == nil || l.Status != state.LotDone {
		t.Fatalf("lot a after the second apply: %+v, want done", l)
	}
	if n := read("log1"); n != "3000000" {
		t.Errorf("the resumed run's log is %s bytes, want the whole 3000000", n)
	}
	apply3 := read("apply3")
	if rc := read("rc3"); rc != "130" || !regexp.MustCompile(`too little free space to start a lot: [0-9.]+ MiB free on \S+ \(the wave's folder\), below the floor of 32 MiB`).MatchString(apply3) {
		t.Fatalf("apply below the floor after a lot: exit %s, want 130 and the free space\n%s", rc, apply3)
	}
	if !regexp.MustCompile(`(?m)^\s*f\s+done`).MatchString(apply3) || !regexp.MustCompile(`(?m)^\s*g\s+queued`).MatchString(apply3) {
		t.Errorf("below the floor, f must be done and g never started:\n%s", apply3)
	}
	floorStop := `too little free space to start a lot: [0-9.]+ MiB free on \S+ \(the wave's folder\), below the floor of 32 MiB`
	if !regexp.MustCompile(`(?m)^Stopped: ` + floorStop).MatchString(read("status3")) {
		t.Errorf("status after the floor stop does not say why the apply stopped:\n%s", read("status3"))
	}
	if !regexp.MustCompile(`(?m)^Lot g: queued\nThe last apply stopped: ` + floorStop).MatchString(read("logs3")) {
		t.Errorf("logs of the lot that never started do not say why the apply stopped:\n%s", read("logs3"))
	}
}
