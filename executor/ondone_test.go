package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// TestDoneNotOnBaseHandedBack: at apply, a lot the state records done
// whose integrated commit is not on its repository's base (a copy of lot
// a's done record onto lot b of another repository, written into the
// state file) is recorded handed back with the reason, its record kept;
// a done lot whose commit is on the base stays done.
func TestDoneNotOnBaseHandedBack(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"app", "web"} {
		path := filepath.Join(dir, name)
		gittest.Git(t, dir, "init", "-q", "-b", "main", path)
		gittest.Commit(t, path, "initial commit", map[string]string{"README.md": "# " + name + "\n"})
	}
	file := filepath.Join(dir, "wave.hcl")
	if err := os.WriteFile(file, []byte(`wave "w" {}
repo "app" {
  path = "app"
}
repo "web" {
  path = "web"
}
lot "a" {
  repo = repo.app
  run  = "true"
}
lot "b" {
  repo = repo.web
  run  = "true"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	store, err := state.OpenStore(filepath.Join(dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sha := gittest.Git(t, filepath.Join(dir, "app"), "rev-parse", "main")
	now := time.Now().UTC()
	for _, id := range []string{"a", "b"} {
		if err := store.UpdateLot(id, func(l *state.Lot) {
			l.Status, l.IntegratedSHA, l.Branch = state.LotDone, sha, "cadence/w/a"
			l.Steps = []state.Step{{Kind: state.StepIntegrate, Started: now, Ended: &now, Status: state.StepOK, HeadAfter: sha}}
		}); err != nil {
			t.Fatal(err)
		}
	}
	plan := &planner.Plan{Lots: []planner.LotPlan{{ID: "a", Action: planner.ActionDone}, {ID: "b", Action: planner.ActionDone}}}
	var ends []string
	r := &runner{o: Options{Config: cfg, Store: store, Git: gitint.NewRepos(gittest.Env()), Plan: plan,
		Events: func(e Event) { ends = append(ends, e.Lot+" "+e.Status) }}, now: time.Now}
	notDone, err := r.checkDone(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !notDone["b"] || notDone["a"] || len(ends) != 1 || ends[0] != "b handed-back" {
		t.Errorf("not done %v, events %v", notDone, ends)
	}
	var a, b state.Lot
	store.View(func(st *state.State) { a, b = *st.Lots["a"], *st.Lots["b"] })
	if a.Status != state.LotDone {
		t.Errorf("a %s (%s)", a.Status, a.Cause)
	}
	if b.Status != state.LotHandedBack || !strings.Contains(b.Cause, "is not on repo web's main") || b.IntegratedSHA != sha || len(b.Steps) != 1 {
		t.Errorf("b %s (%s), integrated %.12s, steps %d", b.Status, b.Cause, b.IntegratedSHA, len(b.Steps))
	}
}
