package executor

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// With parallel = 1 each lot starts when the one before it enters the
// merge queue, from a base that lot is about to move: its own gate would
// run on a tree it never integrates, and the queue would gate it again
// after the rebase. A command lot that will be rebased anyway goes
// straight to the queue instead: n lots cost at most n gate runs (a
// counting gate command, not a time), every lot lands, and every tree the
// base pointed at passed the gate.
func TestOneGatePerCommandLotParallel1(t *testing.T) {
	const n = 10
	repo := gittest.NewRepo(t, map[string]string{"README.md": "# app\n"})
	log := filepath.Join(t.TempDir(), "gate.log")
	src := `wave "w" {}
repo "app" {
  path     = "` + repo + `"
  parallel = 1
  test     = "echo \"$(git rev-parse HEAD^{tree})\" >> \"$GATE_LOG\""
}
`
	for i := 1; i <= n; i++ {
		src += fmt.Sprintf("lot \"l%d\" {\n  repo = repo.app\n  run  = \"echo %d > f%d && git add f%d && git commit -qm l%d\"\n}\n", i, i, i, i, i)
	}
	h := newHarness(t, src)
	remove, err := SystemHost{Git: gitint.NewGit(gittest.Env())}.InstallGuard(context.Background(), h.cfg.Repos[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove() })
	env := append(gittest.Env(), "GATE_LOG="+log)
	res, err := h.runWith(context.Background(), planner.Options{Jobs: 4}, func(o *Options) {
		o.Git, o.Env = gitint.NewRepos(gittest.Env()), env
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &queueWorld{h: h, repo: repo, log: log}
	if res.Status != state.WaveDone {
		t.Fatalf("wave %s, lots %v, causes %v", res.Status, w.status(t), w.causes(t))
	}
	if got := gittest.Git(t, repo, "rev-list", "--count", "main"); got != fmt.Sprint(n+1) {
		t.Fatalf("main has %s commits, want %d", got, n+1)
	}
	runs := w.gateRuns(t)
	if len(runs) > n {
		t.Errorf("%d command lots with parallel = 1 ran the gate %d times, want at most %d (one per lot): %v", n, len(runs), n, runs)
	}
	// Nothing reached the base untested: every tree main pointed at after
	// its start passed the gate.
	gated := map[string]bool{}
	for _, tr := range runs {
		gated[tr] = true
	}
	for _, tr := range w.baseTrees(t)[1:] {
		if !gated[tr] {
			t.Errorf("main pointed at tree %s, which no gate ran on (gate runs %v)", tr, runs)
		}
	}
	t.Logf("%d lots, %d gate runs", n, len(runs))
}
