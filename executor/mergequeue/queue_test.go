package mergequeue

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
)

// Two lots that reach integration together are one batch: b is rebased
// onto a's rebased tip, one gate run on the combined tip covers both, and
// main advances once over both, recorded as cadence's own move.
func TestBatchOneGateCoversBoth(t *testing.T) {
	w := newWorld(t, true)
	a, b := w.lot("a"), w.lot("b")
	if !a.Batchable || !b.Batchable {
		t.Fatalf("batchable: a %v, b %v", a.Batchable, b.Batchable)
	}
	before := w.main()
	res := w.inOrder(a, b)
	for _, id := range []string{"a", "b"} {
		if r := res[id]; r.Kind != Integrated || !slices.Equal(r.Batch, []string{"a", "b"}) {
			t.Errorf("lot %s: %+v, want integrated in batch a, b", id, r)
		}
	}
	if runs := w.gates.runs(); len(runs) != 1 || !strings.HasPrefix(runs[0], "b:") {
		t.Errorf("gate runs %v, want one, in b's worktree", runs)
	}
	main := w.main()
	if res["b"].SHA != main || res["a"].SHA == main || res["a"].From != before || res["b"].From != res["a"].SHA {
		t.Errorf("main %.12s; a %+v; b %+v", main, res["a"], res["b"])
	}
	if got := w.files("main"); got != "README.md\na.txt\nb.txt" {
		t.Errorf("main holds %q", got)
	}
	if len(w.guard.moves) != 1 || w.guard.moves[0].Old != before || w.guard.moves[0].New != main {
		t.Errorf("own moves %+v, want main %.12s → %.12s", w.guard.moves, before, main)
	}
	// The tree that passed is recorded for both lots: not tested again.
	tree := gittest.Git(t, w.repo("app").Path, "rev-parse", "main^{tree}")
	if g, ok := w.q.KnownGate(b.Repos[0], tree); !ok || !g.Green || !slices.Equal(g.Lots, []string{"a", "b"}) {
		t.Errorf("gate of main's tree: %+v, %v", g, ok)
	}
	if w.guard.moving["a"] != 1 || w.guard.moving["b"] != 1 || w.guard.active["a"] != 0 || w.guard.active["b"] != 0 {
		t.Errorf("moving %v, still active %v: each rebase is cadence's move, ended", w.guard.moving, w.guard.active)
	}
}

// A red batch is bisected: with the gate red on a tree holding a.txt and
// c.txt, of the batch a, b, c, d the base advances over a and b, c is
// handed back red, d is put back where it was and integrates in the next
// batch. The base never points at a tree the gate did not pass.
func TestBatchBisectsRed(t *testing.T) {
	w := newWorld(t, true)
	w.gates.red = func(files string) bool { return strings.Contains(files, "a.txt") && strings.Contains(files, "c.txt") }
	lots := []Lot{w.lot("a"), w.lot("b"), w.lot("c"), w.lot("d")}
	res := w.inOrder(lots...)
	for id, want := range map[string]Kind{"a": Integrated, "b": Integrated, "c": Red, "d": Integrated} {
		if res[id].Kind != want {
			t.Errorf("lot %s: %+v, want kind %d", id, res[id], want)
		}
	}
	if !slices.Equal(res["a"].Batch, []string{"a", "b"}) || !slices.Equal(res["d"].Batch, []string{"d"}) {
		t.Errorf("batches: a %v, d %v", res["a"].Batch, res["d"].Batch)
	}
	if c := res["c"].Cause; !strings.Contains(c, "on top of lots a and b") {
		t.Errorf("c's cause: %s", c)
	}
	if got := w.files("main"); got != "README.md\na.txt\nb.txt\nd.txt" {
		t.Errorf("main holds %q", got)
	}
	// Probes: the whole batch (red), a and b (green), a to c (red), then
	// d alone on the new main.
	runs := w.gates.runs()
	var lotsRun []string
	for _, r := range runs {
		lotsRun = append(lotsRun, strings.SplitN(r, ":", 2)[0])
	}
	if !slices.Equal(lotsRun, []string{"d", "b", "c", "d"}) {
		t.Errorf("gate runs in the worktrees of %v, want d, b, c, d", lotsRun)
	}
	// Every commit main pointed at passed the gate.
	for _, m := range w.guard.moves {
		tree := gittest.Git(t, w.repo("app").Path, "rev-parse", m.New+"^{tree}")
		if g, ok := w.q.KnownGate(lots[0].Repos[0], tree); !ok || !g.Green {
			t.Errorf("main moved to %.12s, whose tree has no green gate", m.New)
		}
	}
	// d's own commits sit on the main a and b made; c handed back is no
	// longer recorded stacked.
	if res["d"].From != res["b"].SHA {
		t.Errorf("d from %.12s, want b's %.12s", res["d"].From, res["b"].SHA)
	}
	if l := w.lotState("c"); l.Stacked != nil {
		t.Errorf("c handed back still recorded stacked: %+v", l.Stacked)
	}
}

// A lot alone (merge_queue = false) is rebased, tested and integrated by
// itself; a second Integrate of a branch whose tree passed runs no gate.
func TestAloneIntegrates(t *testing.T) {
	w := newWorld(t, false)
	a := w.lot("a")
	if a.Batchable {
		t.Fatal("merge_queue = false: batchable")
	}
	gittest.Commit(t, w.repo("app").Path, "moved on", map[string]string{"m.txt": "m\n"})
	res, err := w.q.Integrate(context.Background(), a)
	if err != nil || res.Kind != Integrated || res.SHA != w.main() {
		t.Fatalf("%+v, %v; main %.12s", res, err, w.main())
	}
	if len(w.gates.runs()) != 1 {
		t.Errorf("gate runs %v, want one on the rebased branch", w.gates.runs())
	}
}

// A cadence killed between the two advances of a lot with a neighbour
// left its intent: Settle completes it (never rewinds), advancing only
// the base still at its Old, and records the lot integrated.
func TestSettleCompletesIntent(t *testing.T) {
	w := newWorld(t, false)
	a := w.lot("a", "web")
	app, web := w.repo("app"), w.repo("web")
	old := map[string]string{"app": w.main(), "web": gittest.Git(t, web.Path, "rev-parse", "main")}
	tip := map[string]string{
		"app": gittest.Git(t, a.Repos[0].Worktree, "rev-parse", "HEAD"),
		"web": gittest.Git(t, a.Repos[1].Worktree, "rev-parse", "HEAD"),
	}
	// app advanced, web not yet; the integrate step was running.
	gittest.Git(t, app.Path, "merge", "-q", "--ff-only", a.Branch)
	if err := w.store.UpdateLot("a", func(l *state.Lot) {
		l.Steps = []state.Step{{Kind: state.StepIntegrate, Started: time.Now().UTC(), Status: state.StepRunning}}
		l.Integrating = &state.Integration{Repos: []state.BaseMove{
			{Repo: "app", Base: "main", Old: old["app"], New: tip["app"]},
			{Repo: "web", Base: "main", Old: old["web"], New: tip["web"]},
		}}
	}); err != nil {
		t.Fatal(err)
	}
	// app's gate passed on the tree the intent advances app's main to (in
	// an environment other than this apply's).
	gated := a.Repos[0]
	gated.GateEnv = []string{"A=2"}
	if err := w.q.RecordGate("a", gated, gittest.Git(t, app.Path, "rev-parse", tip["app"]+"^{tree}"), true, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	stop, err := w.q.Settle(context.Background(), a)
	if stop != "" || err != nil {
		t.Fatalf("settle: %q, %v", stop, err)
	}
	if got := gittest.Git(t, web.Path, "rev-parse", "main"); got != tip["web"] {
		t.Errorf("web's main at %.12s, want %.12s", got, tip["web"])
	}
	l := w.lotState("a")
	if l.Integrating != nil || l.IntegratedSHA != tip["app"] || !state.Integrated(&l) || l.Steps[0].Status != state.StepInterrupted {
		t.Errorf("lot: integrating %+v, integrated %.12s, steps %+v", l.Integrating, l.IntegratedSHA, l.Steps)
	}
	if len(w.guard.moves) != 1 || w.guard.moves[0].Old != old["web"] || w.guard.moves[0].New != tip["web"] {
		t.Errorf("own moves %+v, want web's main only", w.guard.moves)
	}
}

// An intent written into the state by someone else (a step, between two
// applies) onto a commit app's gate rejects: Settle completes an
// integration only onto trees with a green gate result of their
// repository's gate, so it moves no base and leaves the lot interrupted,
// saying why. Without a result, or with a red one, alike.
func TestSettleForgedIntentRefused(t *testing.T) {
	for _, recorded := range []string{"none", "red", "green elsewhere"} {
		t.Run(recorded, func(t *testing.T) {
			w := newWorld(t, false)
			a := w.lot("a", "web")
			app, web := w.repo("app"), w.repo("web")
			old := map[string]string{"app": w.main(), "web": gittest.Git(t, web.Path, "rev-parse", "main")}
			tip := map[string]string{
				"app": gittest.Git(t, a.Repos[0].Worktree, "rev-parse", "HEAD"),
				"web": gittest.Git(t, a.Repos[1].Worktree, "rev-parse", "HEAD"),
			}
			tree := gittest.Git(t, app.Path, "rev-parse", tip["app"]+"^{tree}")
			switch recorded {
			case "red":
				if err := w.q.RecordGate("a", a.Repos[0], tree, false, []string{"a"}); err != nil {
					t.Fatal(err)
				}
			case "green elsewhere": // web's gate on that tree, app's on another
				if err := w.q.RecordGate("a", a.Repos[1], tree, true, []string{"a"}); err != nil {
					t.Fatal(err)
				}
				if err := w.q.RecordGate("a", a.Repos[0], gittest.Git(t, app.Path, "rev-parse", old["app"]+"^{tree}"), true, []string{"a"}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.store.UpdateLot("a", func(l *state.Lot) {
				l.Integrating = &state.Integration{Repos: []state.BaseMove{
					{Repo: "app", Base: "main", Old: old["app"], New: tip["app"]},
					{Repo: "web", Base: "main", Old: old["web"], New: tip["web"]},
				}}
			}); err != nil {
				t.Fatal(err)
			}
			stop, err := w.q.Settle(context.Background(), a)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stop, "no green result of its test gate") || !strings.Contains(stop, short(tree)) {
				t.Errorf("settle: %q, want the lot stopped for want of a green gate on tree %s", stop, short(tree))
			}
			for name, path := range map[string]string{"app": app.Path, "web": web.Path} {
				if got := gittest.Git(t, path, "rev-parse", "main"); got != old[name] {
					t.Errorf("%s's main moved to %.12s", name, got)
				}
			}
			if l := w.lotState("a"); l.Status != state.LotInterrupted || state.Integrated(&l) || l.Cause != stop {
				t.Errorf("lot %s (%s), integrated %v", l.Status, l.Cause, state.Integrated(&l))
			}
			if len(w.gates.runs()) != 0 {
				t.Errorf("gate runs %v", w.gates.runs())
			}
		})
	}
}

// A cadence killed while lot b sat on a, not yet on the base, left b
// stacked: Settle puts b's branch back where it was before the batch, so
// that a's commit never reaches the base through b.
func TestSettleUnstacks(t *testing.T) {
	w := newWorld(t, true)
	a, b := w.lot("a"), w.lot("b")
	aTip := gittest.Git(t, a.Repos[0].Worktree, "rev-parse", "HEAD")
	bPre := gittest.Git(t, b.Repos[0].Worktree, "rev-parse", "HEAD")
	gittest.Git(t, b.Repos[0].Worktree, "rebase", "-q", aTip)
	if err := w.store.UpdateLot("b", func(l *state.Lot) { l.Stacked = &state.Stack{Onto: aTip, Tip: bPre} }); err != nil {
		t.Fatal(err)
	}
	stop, err := w.q.Settle(context.Background(), b)
	if stop != "" || err != nil {
		t.Fatalf("settle: %q, %v", stop, err)
	}
	if got := gittest.Git(t, w.repo("app").Path, "rev-parse", b.Branch); got != bPre {
		t.Errorf("b's branch at %.12s, want %.12s (before the batch)", got, bPre)
	}
	if l := w.lotState("b"); l.Stacked != nil {
		t.Errorf("b still recorded stacked: %+v", l.Stacked)
	}
}

// Gate results are keyed by command and environment in any order; a red
// result counts only within the run that recorded it.
func TestGateResults(t *testing.T) {
	if GateDigest("make", []string{"A=1", "B=2"}) != GateDigest("make", []string{"B=2", "A=1"}) {
		t.Error("the environment's order changes the digest")
	}
	if GateDigest("make", []string{"A=1"}) == GateDigest("make test", []string{"A=1"}) || GateDigest("make", []string{"A=1"}) == GateDigest("make", []string{"A=2"}) {
		t.Error("command or environment do not change the digest")
	}
	w := newWorld(t, true)
	a := w.lot("a")
	repo := a.Repos[0]
	if err := w.q.RecordGate("a", repo, "tree1", false, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.q.KnownGate(repo, "tree1"); !ok {
		t.Error("a red result of this run is not known")
	}
	other := repo
	other.GateEnv = []string{"A=2"}
	if _, ok := w.q.KnownGate(other, "tree1"); ok {
		t.Error("a result counts for another environment")
	}
	later := New(Config{Git: w.git, Gates: w.gates, Guard: w.guard, Store: w.store, Spec: w.cfg, Began: time.Now().Add(time.Minute)})
	if _, ok := later.KnownGate(repo, "tree1"); ok {
		t.Error("a red result of an earlier run counts")
	}
}

// A gate result is trusted for its exact tree, whatever commit holds it: a
// lot whose own gate passed, rebased onto a base that moved without
// changing the tree (an empty commit), integrates without a gate run; a
// base that changed the tree gets one.
func TestAloneRebasedSameTreeNotGatedAgain(t *testing.T) {
	w := newWorld(t, false)
	for _, c := range []struct {
		id    string
		move  func(path string)
		gated int
	}{
		{"a", func(path string) { gittest.Git(t, path, "commit", "-q", "--allow-empty", "-m", "empty") }, 0},
		{"b", func(path string) { gittest.Commit(t, path, "moved on", map[string]string{"m.txt": "m\n"}) }, 1},
	} {
		lot := w.lot(c.id)
		repo := lot.Repos[0]
		tree := gittest.Git(t, repo.Worktree, "rev-parse", "HEAD^{tree}")
		// What the lot's own gate records (executor, testGate).
		if err := w.q.RecordGate(c.id, repo, tree, true, []string{c.id}); err != nil {
			t.Fatal(err)
		}
		c.move(w.repo("app").Path)
		before := len(w.gates.runs())
		res, err := w.q.Integrate(context.Background(), lot)
		if err != nil || res.Kind != Integrated || res.SHA != w.main() {
			t.Fatalf("lot %s: %+v, %v; main %.12s", c.id, res, err, w.main())
		}
		if got := len(w.gates.runs()) - before; got != c.gated {
			t.Errorf("lot %s: %d gate runs at integration, want %d (gate runs %v)", c.id, got, c.gated, w.gates.runs())
		}
	}
}

// TestAloneAdvancesOnlyWhatWasTested: a lot integrated alone (a repo
// without a test, merge_queue = false, a multi-repo or a replaced lot) is
// rebased and gated, then the base advances to its branch. A step of
// another lot whose box was made while this lot was idle may write this
// lot's branch file (only busy lots' branches are bound read-only), and
// the guard after that step takes the move for cadence's own (the lot is
// Moving). A branch moved between the gate and the advance must not be
// what the base gets: the base goes to the rebased, gated tip or nowhere.
func TestAloneAdvancesOnlyWhatWasTested(t *testing.T) {
	w := newWorld(t, false)
	b := w.lot("b")
	app := w.repo("app").Path
	gittest.Commit(t, app, "moved on", map[string]string{"m.txt": "m\n"}) // b is rebased
	var forged string
	w.guard.remotes = func() {
		// After b's rebase and gate: a forged child of main, not of b.
		scratch := filepath.Join(w.dir, "scratch")
		gittest.Git(t, app, "worktree", "add", "-q", "--detach", scratch, "main")
		forged = gittest.Commit(t, scratch, "forged", map[string]string{"evil.txt": "evil\n"})
		gittest.Git(t, app, "update-ref", "refs/heads/cadence/w/b", forged)
	}
	res, err := w.q.Integrate(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if main := w.main(); main == forged || strings.Contains(w.files("main"), "evil.txt") {
		t.Errorf("main went to the forged branch %.12s (%+v): files %q, b's commit lost", main, res, w.files("main"))
	}
}
