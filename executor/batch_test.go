package executor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// queueWorld is a wave of command lots a, b, c, d in one real repository
// whose test gate is red when the tree holds both a.txt and c.txt (each
// lot alone is green). Each lot's command waits for its go file, so the
// test decides the order in which the lots reach integration; the test
// holds the repository's integration lock until all of them wait, so they
// form one batch, in that order.
type queueWorld struct {
	h              *harness
	repo, go_, log string
	o              func(*Options)
}

func newQueueWorld(t *testing.T, mergeQueue bool, ids ...string) *queueWorld {
	return newQueueWorldFiles(t, mergeQueue, nil, ids...)
}

// newQueueWorldFiles is newQueueWorld where lot id writes files[id] (its
// own id.txt when not named) with its id as content.
func newQueueWorldFiles(t *testing.T, mergeQueue bool, files map[string]string, ids ...string) *queueWorld {
	repo := gittest.NewRepo(t, map[string]string{"README.md": "# app\n"})
	w := &queueWorld{repo: repo, go_: t.TempDir(), log: filepath.Join(t.TempDir(), "gate.log")}
	mq := ""
	if !mergeQueue {
		mq = "merge_queue = false"
	}
	src := `wave "w" {}
repo "app" {
  path     = "` + repo + `"
  parallel = 4
  test     = "echo \"$(git rev-parse HEAD^{tree})\" >> \"$GATE_LOG\"; ! { test -e a.txt && test -e c.txt; }"
  ` + mq + `
}
`
	for _, id := range ids {
		f := files[id]
		if f == "" {
			f = id + ".txt"
		}
		src += `lot "` + id + `" {
  repo = repo.app
  run  = "while ! test -e \"$GO_DIR/` + id + `\"; do sleep 0.01; done; echo ` + id + ` > ` + f + ` && git add ` + f + ` && git commit -qm ` + id + `"
}
`
	}
	w.h = newHarness(t, src)
	// What Apply does before Run: the repository's guard.
	remove, err := SystemHost{Git: gitint.NewGit(gittest.Env())}.InstallGuard(context.Background(), w.h.cfg.Repos[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove() })
	env := append(gittest.Env(), "GO_DIR="+w.go_, "GATE_LOG="+w.log)
	w.o = func(o *Options) { o.Git, o.Env = gitint.NewRepos(gittest.Env()), env }
	return w
}

// integrating waits until lot id's integrate step runs (the state's
// journal says so).
func (w *queueWorld) integrating(t *testing.T, id string, done <-chan Result) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case res := <-done:
			t.Fatalf("the wave ended (%s) before lot %s reached integration: %v", res.Status, id, w.causes(t))
		default:
		}
		st, _, err := state.Read(filepath.Join(w.h.dir, "wave.state.json"))
		if err == nil {
			if l := st.Lots[id]; l != nil && len(l.Steps) > 0 && l.Steps[len(l.Steps)-1].Kind == state.StepIntegrate {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("lot %s never reached integration", id)
}

// runInOrder runs the wave, letting the lots reach integration in order
// while the test holds the integration lock, then releases it.
func (w *queueWorld) runInOrder(t *testing.T, order ...string) Result {
	t.Helper()
	cfgRepo := w.h.cfg.Repos[0]
	unlock, err := gitint.NewRepos(gittest.Env()).LockIntegration(context.Background(), cfgRepo, "test")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() {
		res, err := w.h.runWith(context.Background(), planner.Options{Jobs: 4}, w.o)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for _, id := range order {
		if err := os.WriteFile(filepath.Join(w.go_, id), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		w.integrating(t, id, done)
	}
	unlock()
	return <-done
}

// gateRuns are the trees the gate ran on, in order.
func (w *queueWorld) gateRuns(t *testing.T) []string {
	b, err := os.ReadFile(w.log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// baseTrees are the trees main pointed at, oldest first (its reflog).
func (w *queueWorld) baseTrees(t *testing.T) []string {
	out := gittest.Git(t, w.repo, "log", "-g", "--format=%T", "refs/heads/main")
	trees := strings.Fields(out)
	slices.Reverse(trees)
	return trees
}

// redPair says whether the tree of main's reflog entry k holds both a.txt
// and c.txt (the gate's red pair).
func (w *queueWorld) redBases(t *testing.T) []string {
	var red []string
	for _, tree := range w.baseTrees(t) {
		files := gittest.Git(t, w.repo, "ls-tree", "--name-only", tree)
		if strings.Contains(files, "a.txt") && strings.Contains(files, "c.txt") {
			red = append(red, tree)
		}
	}
	return red
}

func (w *queueWorld) status(t *testing.T) map[string]state.LotStatus {
	m := map[string]state.LotStatus{}
	for id, l := range w.h.lots() {
		m[id] = l.Status
	}
	return m
}

// A batch of three green lots: one gate run on their combined tip, and
// the base advanced over all three at once.
func TestMergeQueueOneGateForTheBatch(t *testing.T) {
	w := newQueueWorld(t, true, "b", "c", "d")
	res := w.runInOrder(t, "b", "d", "c")
	if res.Status != state.WaveDone {
		t.Fatalf("wave %s, lots %v", res.Status, w.status(t))
	}
	// b's own gate (nothing ahead of it); d and c reach their gates with
	// b at integration, so the queue's gate is theirs: the batch of b, d
	// and c, one run.
	if runs := w.gateRuns(t); len(runs) != 2 {
		t.Errorf("the gate ran %d times, want 2 (b's own, 1 for the batch): %v", len(runs), runs)
	}
	// main went from the start to the batch's tip in one move.
	if bases := w.baseTrees(t); len(bases) != 2 {
		t.Errorf("main took %d positions, want 2 (start, the batch's tip): %v", len(bases), bases)
	}
	lots := w.h.lots()
	head := gittest.Git(t, w.repo, "rev-parse", "main")
	if lots["c"].IntegratedSHA != head {
		t.Errorf("c, last in the batch, integrated at %s, main at %s", lots["c"].IntegratedSHA, head)
	}
	for _, id := range []string{"b", "d"} {
		if _, err := gittest.Try(w.repo, "merge-base", "--is-ancestor", lots[id].IntegratedSHA, head); err != nil || lots[id].IntegratedSHA == head {
			t.Errorf("lot %s integrated at %s, not an ancestor of main's %s", id, lots[id].IntegratedSHA, head)
		}
		if lots[id].Stacked != nil {
			t.Errorf("lot %s still records a stack: %+v", id, lots[id].Stacked)
		}
	}
	// The log of d, stacked on b, is d's change only.
	if n := gittest.Git(t, w.repo, "rev-list", "--count", lots["b"].IntegratedSHA+".."+lots["d"].IntegratedSHA); n != "1" {
		t.Errorf("d's integrated commit is %s commits past b's, want 1", n)
	}
}

// A red batch is bisected: the lot whose prefix turns red is handed back,
// those ahead of it integrated, those behind it go to the next batch; the
// base never points at a red tree.
func TestMergeQueueBisectsRed(t *testing.T) {
	w := newQueueWorld(t, true, "a", "b", "c", "d")
	w.runInOrder(t, "a", "b", "c", "d")
	st := w.status(t)
	want := map[string]state.LotStatus{"a": state.LotDone, "b": state.LotDone, "c": state.LotHandedBack, "d": state.LotDone}
	for id, s := range want {
		if st[id] != s {
			t.Errorf("lot %s = %s, want %s", id, st[id], s)
		}
	}
	if red := w.redBases(t); len(red) > 0 {
		t.Errorf("main pointed at red trees %v", red)
	}
	if t.Failed() {
		t.Logf("causes: %v\nmain: %s", w.causes(t), gittest.Git(t, w.repo, "log", "-g", "--format=%H %T %gs", "refs/heads/main"))
		wt := w.h.lots()["d"].Worktree
		hb, _ := os.ReadFile(filepath.Join(gittest.Git(t, wt, "rev-parse", "--git-dir"), "HEAD"))
		t.Logf("d wt HEAD %s file %q; refs %s; d reflog %s; status %s", gittest.Git(t, wt, "rev-parse", "HEAD"), hb, gittest.Git(t, w.repo, "for-each-ref"), gittest.Git(t, w.repo, "log", "-g", "--format=%H %gs", "refs/heads/cadence/w/d"), gittest.Git(t, wt, "status", "--short"))
	}
	c := w.h.lots()["c"]
	if !strings.Contains(c.Cause, "red on the rebased branch, on top of lots a and b") {
		t.Errorf("c's cause = %q", c.Cause)
	}
	// c's branch holds a's and b's changes (on main now) and its own, no
	// other lot's.
	if out := gittest.Git(t, w.repo, "log", "--format=%s", "main..cadence/w/c"); out != "c" {
		t.Errorf("c's branch past main = %q, want its own commit only", out)
	}
	// a's own (b, c and d reach their gates with a at integration: the
	// queue gates them), then the batch of 4 (red), its prefix of 2
	// (green), of 3 (red), and d alone on main: 5 runs, each on a
	// different tree.
	runs := w.gateRuns(t)
	if len(runs) != 5 {
		t.Errorf("the gate ran %d times, want 5: %v", len(runs), runs)
	}
	seen := map[string]bool{}
	for _, tr := range runs {
		if seen[tr] {
			t.Errorf("tree %s tested twice: %v", tr, runs)
		}
		seen[tr] = true
	}
}

// With merge_queue = false every lot integrates alone: rebased, gated and
// advanced one after the other (what batches are measured against).
func TestMergeQueueOff(t *testing.T) {
	w := newQueueWorld(t, false, "b", "c", "d")
	res := w.runInOrder(t, "b", "d", "c")
	if res.Status != state.WaveDone {
		t.Fatalf("wave %s, lots %v", res.Status, w.status(t))
	}
	// 3 own; b integrates first without a gate (not rebased), d and c
	// rebased, each gated again.
	if runs := w.gateRuns(t); len(runs) != 5 {
		t.Errorf("the gate ran %d times, want 5: %v", len(runs), runs)
	}
	if bases := w.baseTrees(t); len(bases) != 4 {
		t.Errorf("main took %d positions, want 4: %v", len(bases), bases)
	}
}

func (w *queueWorld) causes(t *testing.T) map[string]string {
	m := map[string]string{}
	for id, l := range w.h.lots() {
		m[id] = l.Cause
	}
	return m
}

// A lot that conflicts only with a lot ahead of it in the batch goes to the
// next batch, where (that lot now on main) it conflicts with the base and
// is handed back; the batch's other lots integrate meanwhile.
func TestMergeQueueConflictWithLotAhead(t *testing.T) {
	w := newQueueWorldFiles(t, true, map[string]string{"x": "f.txt", "y": "f.txt"}, "x", "b", "y")
	w.runInOrder(t, "x", "b", "y")
	st := w.status(t)
	if st["x"] != state.LotDone || st["b"] != state.LotDone || st["y"] != state.LotHandedBack {
		t.Fatalf("lots %v, causes %v", st, w.causes(t))
	}
	if c := w.causes(t)["y"]; !strings.Contains(c, "conflicts in f.txt") {
		t.Errorf("y's cause = %q", c)
	}
	// y's branch is its own commit on the start, as before its batches.
	if out := gittest.Git(t, w.repo, "log", "--format=%s", "main..cadence/w/y"); out != "y" {
		t.Errorf("y's branch past main = %q", out)
	}
	if w.h.lots()["y"].Stacked != nil {
		t.Errorf("y still records a stack")
	}
}

// A batch that cannot advance (the base's checkout has uncommitted
// changes) ends every lot it holds, the one sent to the next batch
// included: all wait at integrate, their branches put back, none hangs.
func TestMergeQueueAdvanceRefused(t *testing.T) {
	w := newQueueWorldFiles(t, true, map[string]string{"x": "f.txt", "y": "f.txt"}, "x", "b", "y")
	if err := os.WriteFile(filepath.Join(w.repo, "README.md"), []byte("the lead's edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.runInOrder(t, "x", "b", "y")
	for id, s := range w.status(t) {
		if s != state.LotInterrupted {
			t.Errorf("lot %s = %s (%s), want interrupted: its integration waits", id, s, w.causes(t)[id])
		}
	}
	if n := gittest.Git(t, w.repo, "rev-list", "--count", "main"); n != "1" {
		t.Errorf("main has %s commits, want the first only", n)
	}
	for id, l := range w.h.lots() {
		if l.Stacked != nil {
			t.Errorf("lot %s still records a stack", id)
		}
		if out := gittest.Git(t, w.repo, "log", "--format=%s", "main..cadence/w/"+id); out != id {
			t.Errorf("lot %s's branch past main = %q, want its own commit", id, out)
		}
	}
}
