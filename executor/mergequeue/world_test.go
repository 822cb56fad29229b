package mergequeue

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// world is a wave "w" with repositories app and web (real repositories
// under t.TempDir()), app's test gate a fakeGates, its state in a store
// of its own, and a queue working on it with gitint.Repos.
type world struct {
	t     *testing.T
	dir   string
	cfg   *spec.Config
	store *state.Store
	git   *gitint.Repos
	gates *fakeGates
	guard *fakeGuard
	q     *Queue
}

func newWorld(t *testing.T, mergeQueue bool) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir(), git: gitint.NewRepos(gittest.Env()), guard: &fakeGuard{}}
	w.gates = &fakeGates{w: w, red: func(string) bool { return false }}
	for _, name := range []string{"app", "web"} {
		path := filepath.Join(w.dir, name)
		gittest.Git(t, w.dir, "init", "-q", "-b", "main", path)
		gittest.Commit(t, path, "initial commit", map[string]string{"README.md": "# " + name + "\n"})
	}
	mq := ""
	if !mergeQueue {
		mq = "merge_queue = false"
	}
	file := filepath.Join(w.dir, "wave.hcl")
	src := `wave "w" {}
repo "app" {
  path = "app"
  test = "true"
  ` + mq + `
}
repo "web" {
  path = "web"
}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	w.cfg = cfg
	store, err := state.OpenStore(filepath.Join(w.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	w.store = store
	w.q = New(Config{Git: w.git, Gates: w.gates, Guard: w.guard, Store: store, Spec: cfg,
		Began: time.Now().Add(-time.Minute)})
	return w
}

func (w *world) repo(name string) *spec.Repo { return w.cfg.Repo(name) }

// lot makes lot id's branch cadence/w/<id> in repo app (and the
// neighbours named), in a worktree of its own, one commit ahead of main
// adding <id>.txt, and returns the lot, recorded in the state with the
// base it started from.
func (w *world) lot(id string, also ...string) Lot {
	w.t.Helper()
	lot := Lot{ID: id, Branch: "cadence/w/" + id}
	base := ""
	for k, name := range append([]string{"app"}, also...) {
		rp := w.repo(name)
		wt := filepath.Join(w.dir, "wt", id, name)
		if k == 0 {
			base = gittest.Git(w.t, rp.Path, "rev-parse", "main")
		}
		gittest.Git(w.t, rp.Path, "worktree", "add", "-q", "-b", lot.Branch, wt, "main")
		gittest.Commit(w.t, wt, id, map[string]string{id + ".txt": id + "\n"})
		label := ""
		if k > 0 {
			label = name
		}
		lot.Repos = append(lot.Repos, Repo{Spec: rp, Worktree: wt, Label: label, GateEnv: []string{"A=1"}})
	}
	if err := w.store.UpdateLot(id, func(l *state.Lot) {
		l.Status, l.Branch, l.BaseSHA = state.LotRunning, lot.Branch, base
	}); err != nil {
		w.t.Fatal(err)
	}
	specs := make([]*spec.Repo, len(lot.Repos))
	for k, rp := range lot.Repos {
		specs[k] = rp.Spec
	}
	lot.Batchable = w.q.Batchable(id, specs)
	return lot
}

// main is app's main.
func (w *world) main() string { return gittest.Git(w.t, w.repo("app").Path, "rev-parse", "main") }

// files is what app's main holds.
func (w *world) files(rev string) string {
	return gittest.Git(w.t, w.repo("app").Path, "ls-tree", "--name-only", rev)
}

func (w *world) lotState(id string) state.Lot {
	var l state.Lot
	w.store.View(func(st *state.State) { l = *st.Lots[id] })
	return l
}

// inOrder integrates lots at once, as one batch in the given order: app's
// integration lock is held until every lot waits in the queue.
func (w *world) inOrder(lots ...Lot) map[string]Result {
	w.t.Helper()
	ctx := context.Background()
	unlock, err := w.git.LockIntegration(ctx, w.repo("app"), "other")
	if err != nil {
		w.t.Fatal(err)
	}
	results := map[string]Result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k, lot := range lots {
		wg.Go(func() {
			res, err := w.q.Integrate(ctx, lot)
			if err != nil {
				w.t.Errorf("lot %s: %v", lot.ID, err)
			}
			mu.Lock()
			results[lot.ID] = res
			mu.Unlock()
		})
		w.waitFor("lot "+lot.ID+" in the queue", func() bool {
			rq := w.q.of(w.repo("app"))
			rq.mu.Lock()
			defer rq.mu.Unlock()
			return len(rq.waiting) == k+1
		})
	}
	unlock()
	wg.Wait()
	return results
}

// waitFor polls cond every 10 ms for at most a minute (a bound, not a
// timing: each condition comes true in every correct run).
func (w *world) waitFor(what string, cond func() bool) {
	w.t.Helper()
	for range 6000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.t.Fatalf("gave up waiting for %s", what)
}

// fakeGates is a test gate in Go: red on a tree red says so of (given the
// worktree's files), green otherwise; it records the trees it ran on.
type fakeGates struct {
	w   *world
	red func(files string) bool
	mu  sync.Mutex
	ran []string // "lot:tree"
}

func (g *fakeGates) Test(ctx context.Context, lot string, repo Repo) (GateRun, error) {
	tree := gittest.Git(g.w.t, repo.Worktree, "rev-parse", "HEAD^{tree}")
	files := gittest.Git(g.w.t, repo.Worktree, "ls-tree", "--name-only", "HEAD")
	g.mu.Lock()
	g.ran = append(g.ran, lot+":"+tree)
	g.mu.Unlock()
	if g.red(files) {
		return GateRun{Status: GateRed, Cause: "red on " + strings.ReplaceAll(files, "\n", " ")}, nil
	}
	return GateRun{Status: GateGreen}, nil
}

func (g *fakeGates) runs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.ran...)
}

// fakeGuard records what the queue tells the guards.
type fakeGuard struct {
	mu     sync.Mutex
	moves  []gitint.RefMove
	moving map[string]int
	active map[string]int
	// remotes, when set, runs at each CheckRemotes: after the lot's
	// rebase and gate, before the base advances.
	remotes func()
}

func (g *fakeGuard) OwnMove(repo *spec.Repo, lot string, move func() gitint.RefMove) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m := move(); m.Ref != "" && m.Old != m.New {
		g.moves = append(g.moves, m)
	}
}

func (g *fakeGuard) Moving(lot string) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.moving == nil {
		g.moving, g.active = map[string]int{}, map[string]int{}
	}
	g.moving[lot]++
	g.active[lot]++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.active[lot]--
			g.mu.Unlock()
		})
	}
}

func (g *fakeGuard) CheckTips(context.Context, string) {}

func (g *fakeGuard) CheckRemotes(context.Context, string, []*spec.Repo) (string, []string) {
	if g.remotes != nil {
		g.remotes()
	}
	return "", nil
}
