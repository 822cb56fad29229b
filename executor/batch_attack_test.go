package executor

// Attacks on the merge queue: tests that break its
// promises. Each test states the promise it checks.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
	"github.com/cadence-run/cadence/planner"
)

// reviewWorld is a wave over one real repository with the test gate test
// and the lots given as HCL bodies (without the repo line), in order.
type reviewWorld struct {
	h              *harness
	repo, go_, log string
	o              func(*Options)
}

func newReviewWorld(t *testing.T, test string, parallel string, lots [][2]string) *reviewWorld {
	return newReviewWorldWith(t, test, parallel, "", lots)
}

// newReviewWorldWith is newReviewWorld with extra attributes of the repo.
func newReviewWorldWith(t *testing.T, test, parallel, extra string, lots [][2]string) *reviewWorld {
	repo := gittest.NewRepo(t, map[string]string{"README.md": "# app\n", "x.txt": "base\n"})
	w := &reviewWorld{repo: repo, go_: t.TempDir(), log: filepath.Join(t.TempDir(), "gate.log")}
	src := `wave "w" {}
repo "app" {
  path     = "` + repo + `"
  parallel = ` + parallel + `
  test     = ` + hclString(test) + `
  ` + extra + `
}
`
	for _, l := range lots {
		src += `lot "` + l[0] + `" {
  repo = repo.app
` + l[1] + `
}
`
	}
	w.h = newHarness(t, src)
	remove, err := SystemHost{Git: gitint.NewGit(gittest.Env())}.InstallGuard(context.Background(), w.h.cfg.Repos[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove() })
	env := append(gittest.Env(), "GO_DIR="+w.go_, "GATE_LOG="+w.log, "REPO_DIR="+repo)
	w.o = func(o *Options) { o.Git, o.Env = gitint.NewRepos(gittest.Env()), env }
	return w
}

func hclString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "${", "$${")
	return `"` + r.Replace(s) + `"`
}

// greenTrees are the trees the gate logged green on ("TREE green" lines).
func (w *reviewWorld) greenTrees(t *testing.T) map[string]bool {
	b, err := os.ReadFile(w.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	green := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == "green" {
			green[f[0]] = true
		}
	}
	return green
}

// untestedBases are the trees main pointed at (its reflog; the tree it
// started at excepted) on which the gate never ran green.
func (w *reviewWorld) untestedBases(t *testing.T) []string {
	out := gittest.Git(t, w.repo, "log", "-g", "--format=%T %gs", "refs/heads/main")
	lines := strings.Split(out, "\n")
	slices.Reverse(lines)
	green := w.greenTrees(t)
	start, _, _ := strings.Cut(lines[0], " ")
	var bad []string
	for _, l := range lines[1:] {
		if tree, _, _ := strings.Cut(l, " "); !green[tree] && tree != start {
			bad = append(bad, l)
		}
	}
	return bad
}

// gateThatCommits is a test gate that logs the tree it runs on with its
// verdict, is red on any tree holding gen.txt, and, on a tree holding
// every file of when (space separated), commits gen.txt (a generated
// file, as a formatter or a code generator in a test script does) and
// exits 0.
func gateThatCommits(when string) string {
	cond := "true"
	for _, f := range strings.Fields(when) {
		cond += " && test -e " + f
	}
	return `t=$(git rev-parse HEAD^{tree}); ` +
		`if test -e gen.txt; then echo "$t red" >> "$GATE_LOG"; exit 1; fi; ` +
		`echo "$t green" >> "$GATE_LOG"; ` +
		`if ` + cond + `; then echo gen > gen.txt && git add gen.txt && git commit -qm gen; fi`
}

func commitLot(id string) [2]string {
	return [2]string{id, `  run = "while ! test -e \"$GO_DIR/` + id + `\"; do sleep 0.01; done; echo ` + id + ` > ` + id + `.txt && git add ` + id + `.txt && git commit -qm ` + id + `"`}
}

// Promise: "never does the base point at a tip whose tree did not pass
// the gate" / "results keyed by tree". A lot's own test step whose gate
// commits (a generator, a formatter) is recorded green for the tree
// after the commit, read after the gate ran: a tree the gate never ran
// on. Its integration then takes that result for the rebased tip and
// advances main to a tree on which the gate is red.
func TestQueueAttackOwnGateCreditsTheTreeItMade(t *testing.T) {
	for _, mq := range []string{"", "merge_queue = false"} {
		t.Run(map[string]string{"": "queue", "merge_queue = false": "queue-off"}[mq], func(t *testing.T) {
			ownGateCreditsTheTreeItMade(t, mq)
		})
	}
}

// With merge_queue = false the lot integrates alone (mergequeue, integrateAlone):
// tested() takes the tree's green result, or the test step's HeadAfter
// (also read after the gate ran), for the rebased tip: the same hole, older
// than the queue.
func ownGateCreditsTheTreeItMade(t *testing.T, extra string) {
	w := newReviewWorldWith(t, gateThatCommits(""), "1", extra, [][2]string{commitLot("a")})
	if err := os.WriteFile(filepath.Join(w.go_, "a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.h.runWith(context.Background(), planner.Options{Jobs: 2}, w.o)
	if err != nil {
		t.Fatal(err)
	}
	if bad := w.untestedBases(t); len(bad) > 0 {
		t.Errorf("main pointed at trees the gate never passed (wave %s, a %s: %q): %v",
			res.Status, w.h.status("a"), w.h.lots()["a"].Cause, bad)
	}
	if out := gittest.Git(t, w.repo, "ls-tree", "--name-only", "main"); strings.Contains(out, "gen.txt") {
		t.Errorf("main holds gen.txt, on which the gate is red: %s", out)
	}
}

// Promise: "never does the base point at a tip whose tree did not pass
// the gate". The queue's gate runs on the combined tip in the last lot's
// worktree; a gate that commits there moves that lot's branch, and
// Advance fast-forwards main to the branch (by name), so main points at
// the gate's commit (a tree never tested, red here) before cadence sees
// that it is not the batch's tip and rewinds it. A kill -9 in between, or
// a rewind that fails, leaves it there; the lead's checkout is updated to
// it and back meanwhile.
func TestQueueAttackQueueGateThatCommitsMovesMainToAnUntestedTree(t *testing.T) {
	w := newReviewWorld(t, gateThatCommits("b.txt c.txt"), "4", [][2]string{commitLot("b"), commitLot("c")})
	q := &queueWorld{h: w.h, repo: w.repo, go_: w.go_, log: w.log, o: w.o}
	res := q.runInOrder(t, "b", "c")
	if bad := w.untestedBases(t); len(bad) > 0 {
		t.Errorf("main pointed at trees the gate never passed (wave %s, causes %v): %v", res.Status, q.causes(t), bad)
	}
}

// waitFor polls cond for at most testutil.WaitTimeout (a bound, not a
// timing: each condition comes true in every correct run). It reports a
// failure with Errorf: the agent's goroutines call it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testutil.Eventually(testutil.WaitTimeout, cond) {
		t.Errorf("gave up waiting for %s", what)
	}
}

// Promise: a lot in the queue "gives its place under parallel and -jobs
// to the next lot" — once. An agent lot with on_conflict = "fix" whose
// batch finds a conflict with the base runs its fix session and comes to
// the queue again: the dispatcher gives its place back a second time
// (take(n, -1) on every receive from inQueue), so from then on the
// repository runs one lot more than parallel: here c and d at once, with
// parallel = 1.
func TestQueueAttackConflictFixGivesItsPlaceTwice(t *testing.T) {
	w := newReviewWorld(t, "true", "1", [][2]string{
		{"a", `  run = "echo from a > x.txt && git commit -qam a"
  estimate = "2h"`}, // first
		{"b", `  brief = "change x"
  on_conflict = "fix"`},
		// c runs until d started (the cap broken) or b is on main.
		{"c", `  run = "i=0; while ! test -e \"$GO_DIR/d.started\" && ! git -C \"$REPO_DIR\" log --format=%s main | grep -qx b; do i=$((i+1)); test $i -gt 6000 && break; sleep 0.01; done"`},
		{"d", `  run = "touch \"$GO_DIR/d.started\""`},
	})
	// The test holds the integration lock until b's session runs, so that
	// b's branch starts from main without a's change, and conflicts.
	unlock, err := gitint.NewRepos(gittest.Env()).LockIntegration(context.Background(), w.h.cfg.Repos[0], "test")
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(unlock) }
	defer release()
	onMain := func(subject string) bool {
		out, _ := gittest.Try(w.repo, "log", "--format=%s", "main")
		return slices.Contains(strings.Split(out, "\n"), subject)
	}
	var mu sync.Mutex
	var events []Event
	w.h.agent.noCommit = func(Session) bool { return true }
	w.h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Usage: state.Usage{Input: 10, Output: 5}, Report: &Report{Summary: "did it"}}
		if s.ReadOnly {
			out.Report = &Report{Verdict: "fine"}
			return out, 0
		}
		switch s.Step {
		case state.StepImplement:
			release()
			waitFor(t, "a on main", func() bool { return onMain("a") })
			if err := os.WriteFile(filepath.Join(s.Dir, "x.txt"), []byte("from b\n"), 0o644); err != nil {
				t.Error(err)
			}
			gittest.Git(t, s.Dir, "commit", "-qam", "b")
		case state.StepFix:
			// b gave its place at its first try: c runs now.
			waitFor(t, "c running", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return slices.ContainsFunc(events, func(e Event) bool { return e.Kind == EvLotStart && e.Lot == "c" })
			})
			gittest.Git(t, s.Dir, "-c", "core.hooksPath=/dev/null", "rebase", "-q", "-X", "theirs", "main")
		}
		return out, 0
	}
	o := func(opts *Options) {
		w.o(opts)
		opts.Events = func(e Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
	}
	res, err := w.h.runWith(context.Background(), planner.Options{Jobs: 4}, o)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var trail []string
	cRan, dStarted := false, false
	for _, e := range events {
		switch {
		case e.Kind == EvStepStart && e.Lot == "c" && e.Step == state.StepRun:
			cRan = true
			trail = append(trail, "c run started")
		case e.Kind == EvStepEnd && e.Lot == "c" && e.Step == state.StepRun:
			cRan = false
			trail = append(trail, "c run ended")
		case e.Kind == EvLotStart && e.Lot == "d":
			dStarted = true
			trail = append(trail, "d started")
			if cRan {
				t.Errorf("lot d started while lot c's command ran, in a repository with parallel = 1")
			}
		case e.Kind == EvStepEnd && e.Lot == "b":
			trail = append(trail, "b "+string(e.Step)+" "+e.Status)
		}
	}
	if !dStarted || t.Failed() {
		t.Logf("wave %s; statuses a %s (%s) b %s c %s d %s; events: %v", res.Status, w.h.status("a"), w.h.lots()["a"].Cause, w.h.status("b"), w.h.status("c"), w.h.status("d"), trail)
	}
	if !slices.Contains(trail, "b integrate failed") {
		t.Errorf("b never conflicted at integration: the test did not set up what it checks")
	}
}
