package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// TestWrappingRunnerSharesTheGuard: a step runner that wraps step.Local
// (Options.Steps, here one that counts its steps) runs its steps under the
// guard the merge queue records cadence's own moves in, so a step that
// runs while a neighbour lot integrates does not take cadence's own
// fast-forward of the base for a foreign move: both lots integrate, as
// with step.Local itself.
func TestWrappingRunnerSharesTheGuard(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		name := "local"
		if wrapped {
			name = "wrapped"
		}
		t.Run(name, func(t *testing.T) {
			repo := gittest.NewRepo(t, map[string]string{"README.md": "# app\n"})
			goDir := t.TempDir()
			src := `wave "w" {}
repo "app" {
  path     = "` + repo + `"
  parallel = 2
}
lot "a" {
  repo = repo.app
  run  = "echo a > a.txt && git add a.txt && git commit -qm a"
}
lot "b" {
  repo = repo.app
  run  = "while ! test -e \"$GO_DIR/b\"; do sleep 0.01; done; echo b > b.txt && git add b.txt && git commit -qm b"
}
`
			h := newHarness(t, src)
			remove, err := SystemHost{Git: gitint.NewGit(gittest.Env())}.InstallGuard(context.Background(), h.cfg.Repos[0])
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = remove() })
			env := append(gittest.Env(), "GO_DIR="+goDir)
			var rec *wrappedRunner
			done := make(chan Result, 1)
			go func() {
				res, err := h.runWith(context.Background(), planner.Options{Jobs: 2}, func(o *Options) {
					o.Git, o.Env = gitint.NewRepos(gittest.Env()), env
					if wrapped {
						o.Steps = func(lo step.LocalOptions) step.Runner {
							rec = &wrappedRunner{Runner: step.NewLocal(lo)}
							return rec
						}
					}
				})
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			// b's run step is running (it waits for its go file) while a
			// integrates; then b is let go.
			deadline := time.Now().Add(2 * time.Minute)
			for h.statusOrEmpty("a") != state.LotDone {
				if time.Now().After(deadline) {
					t.Fatalf("lot a never done (%s)", h.statusOrEmpty("a"))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := os.WriteFile(filepath.Join(goDir, "b"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			var res Result
			select {
			case res = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("the wave did not end")
			}
			if res.Incident != "" {
				t.Errorf("incident: %s", res.Incident)
			}
			for _, id := range []string{"a", "b"} {
				if l := h.lots()[id]; l.Status != state.LotDone {
					t.Errorf("lot %s %s: %s", id, l.Status, l.Cause)
				}
			}
			files := gittest.Git(t, repo, "ls-tree", "--name-only", "main")
			if !strings.Contains(files, "a.txt") || !strings.Contains(files, "b.txt") {
				t.Errorf("main holds %q: want a.txt and b.txt", files)
			}
			if wrapped && rec.steps.Load() == 0 {
				t.Error("the wrapping runner ran no step")
			}
		})
	}
}

// wrappedRunner is the smallest step runner that is not *step.Local: it
// counts the steps it runs and delegates everything to the runner it
// embeds (it passes steptest.Run as step.Local does).
type wrappedRunner struct {
	step.Runner
	steps atomic.Int64
}

func (w *wrappedRunner) RunStep(ctx context.Context, req step.Request, events step.Events) (step.Result, error) {
	w.steps.Add(1)
	return w.Runner.RunStep(ctx, req, events)
}

// statusOrEmpty is the lot's status in the state file, "" while there is
// none yet.
func (h *harness) statusOrEmpty(id string) state.LotStatus {
	st, _, err := state.Read(filepath.Join(h.dir, "wave.state.json"))
	if err != nil || st == nil || st.Lots[id] == nil {
		return ""
	}
	return st.Lots[id].Status
}
