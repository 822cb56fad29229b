package step_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/steptest"
	"github.com/cadence-run/cadence/internal/state"
)

// supervisorTeller hands a step its supervisor's pid, as a hostile step
// could learn it on the machine: when the step starts it writes the
// parent of the step's first process (bwrap in the box, the shell
// outside it) into file.
type supervisorTeller struct {
	steptest.Recorder
	file string
}

func (s *supervisorTeller) Emit(e step.Event) error {
	if e.Kind == step.EventStarted {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(e.PID) + "/stat"); err == nil {
			// pid (comm) state ppid ...: comm may hold spaces, so read
			// after its last ')'.
			if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 1 {
				_ = os.WriteFile(s.file+".tmp", []byte(f[1]+"\n"), 0o644)
				_ = os.Rename(s.file+".tmp", s.file)
			}
		}
	}
	return s.Recorder.Emit(e)
}

// TestSandboxHidesTheSupervisor: a boxed step cannot reach its supervisor
// at all: it runs in a PID namespace of its own, where the supervisor's
// pid names no process, so kill -9 of it fails and the step ends as it
// chose (status ok). Outside the box the same kill ends the supervisor
// and the step with it.
func TestSandboxHidesTheSupervisor(t *testing.T) {
	for _, off := range []bool{true, false} {
		w := newBoxWave(t)
		pidFile := filepath.Join(w.wt["a"], "sup.pid")
		script := `i=0; while [ ! -s sup.pid ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
kill -9 "$(cat sup.pid)" 2> kill.err; echo $? > kill.rc
sleep 0.3; exit 0`
		req := step.Request{Lot: w.lot("a"), Kind: state.StepRun, Dir: w.wt["a"], Command: script, Timeout: time.Minute,
			Log: filepath.Join(w.root, "logs", "run.log"), OutsideSandbox: true, NoSandbox: off}
		res, err := w.local.RunStep(context.Background(), req, &supervisorTeller{file: pidFile})
		if err != nil {
			t.Fatalf("RunStep: %v", err)
		}
		if read(t, pidFile) == "" || strings.HasPrefix(read(t, pidFile), "(") {
			t.Fatalf("no supervisor pid was handed to the step")
		}
		if off {
			if res.Status == state.StepOK {
				t.Errorf("sandbox off: the step survived killing its supervisor (kill: %s %s); the test proves nothing", read(t, filepath.Join(w.wt["a"], "kill.rc")), read(t, filepath.Join(w.wt["a"], "kill.err")))
			}
			continue
		}
		if res.Status != state.StepOK || read(t, filepath.Join(w.wt["a"], "kill.rc")) == "0\n" || !strings.Contains(read(t, filepath.Join(w.wt["a"], "kill.err")), "No such process") {
			t.Errorf("sandbox on: status %s (%s), kill exit %q: %q; want the supervisor out of reach (No such process), the step ok",
				res.Status, res.Cause, read(t, filepath.Join(w.wt["a"], "kill.rc")), read(t, filepath.Join(w.wt["a"], "kill.err")))
		}
	}
}

// TestSandboxLeavesNothingInTheHostsTmp: the box replaces /tmp with its
// own and makes every bind's mount point there, so a boxed step's run
// (its binds under the host's TMPDIR, the step writing /tmp, $TMPDIR and
// a .git folder there, git committing) leaves nothing new in the host's
// TMPDIR nor in the folders bound into the box, but for its own
// worktree's work, the step's log and the sandbox's build cache.
func TestSandboxLeavesNothingInTheHostsTmp(t *testing.T) {
	host, err := os.MkdirTemp("", "hosttmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(host) })
	t.Setenv("TMPDIR", host)
	w := newBoxWave(t) // its folders under host, which its steps' env names as TMPDIR
	w.local = step.NewLocal(w.opts("TMPDIR=" + host))
	before := listTree(t, host)
	probe := "/tmp/" + filepath.Base(host) + "-probe" // unique on the machine
	res := w.run(t, `set -e
mkdir -p /tmp/.git `+probe+`/.git "$TMPDIR/.git" && echo x > /tmp/f && echo y > "$TMPDIR/g"
cd /tmp && git init -q scratch
cd - > /dev/null && echo hi > g && git add g && git commit -q -m 'a: add g'`, false)
	if res.Status != state.StepOK {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Cause, res.Output)
	}
	// The step's own: its log, its worktree and git paths, the sandbox's
	// build cache (made by the runner) and the folders above it.
	cache := filepath.Join(w.home, ".cache", "cadence", "sandbox")
	var added []string
	for p := range listTree(t, host) {
		if !before[p] && !within(p, filepath.Join(w.root, "logs")) && !within(p, w.wt["a"]) && !within(p, filepath.Join(w.app, ".git")) && !within(cache, p) {
			added = append(added, p)
		}
	}
	if len(added) > 0 {
		t.Errorf("the boxed step left in the host's TMPDIR: %q", added)
	}
	if _, err := os.Lstat(probe); err == nil {
		_ = os.RemoveAll(probe)
		t.Errorf("the boxed step's %s/.git is on the host", probe)
	}
}

// listTree is every path under root (root's own included), as a set.
func listTree(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err == nil {
			out[p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// within says p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
