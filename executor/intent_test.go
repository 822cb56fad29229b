package executor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// intentWorld is lot a of repo app with the neighbour web, both real
// repositories whose branch cadence/w/a is one commit ahead of main, and
// a state recording the lot's integration as begun (its intent) with the
// integrate step running, as a cadence killed between two advances leaves
// it.
type intentWorld struct {
	t        *testing.T
	dir      string
	cfg      *spec.Config
	store    *state.Store
	app, web string
	old, new map[string]string // per repo name
}

func newIntentWorld(t *testing.T) *intentWorld {
	t.Helper()
	w := &intentWorld{t: t, dir: t.TempDir(), old: map[string]string{}, new: map[string]string{}}
	w.app, w.web = filepath.Join(w.dir, "app"), filepath.Join(w.dir, "web")
	for name, path := range map[string]string{"app": w.app, "web": w.web} {
		w.git(w.dir, "init", "-q", "-b", "main", path)
		w.commit(path, "README.md")
		w.old[name] = w.git(path, "rev-parse", "main")
		w.git(path, "checkout", "-q", "-b", "cadence/w/a")
		w.commit(path, name+".txt")
		w.new[name] = w.git(path, "rev-parse", "HEAD")
		w.git(path, "checkout", "-q", "main")
	}
	file := filepath.Join(w.dir, "wave.hcl")
	if err := os.WriteFile(file, []byte(`wave "w" {}
repo "app" {
  path = "app"
}
repo "web" {
  path = "web"
}
lot "a" {
  repo  = repo.app
  also  = [repo.web]
  brief = "do a"
}
`), 0o644); err != nil {
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
	err = store.UpdateLot("a", func(l *state.Lot) {
		l.Status, l.Branch, l.BaseSHA = state.LotRunning, "cadence/w/a", w.old["app"]
		l.Steps = []state.Step{{Kind: state.StepIntegrate, Started: time.Now().UTC(), Status: state.StepRunning}}
		l.Integrating = &state.Integration{Repos: []state.BaseMove{
			{Repo: "app", Base: "main", Old: w.old["app"], New: w.new["app"]},
			{Repo: "web", Base: "main", Old: w.old["web"], New: w.new["web"]},
		}}
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *intentWorld) git(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (w *intentWorld) commit(dir, file string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(file+"\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
	w.git(dir, "add", file)
	w.git(dir, "commit", "-qm", "add "+file)
}

// settle runs the next apply's recovery of lot a (planned with action).
func (w *intentWorld) settle(action planner.Action) (*runner, bool, *state.Lot) {
	w.t.Helper()
	r := &runner{o: Options{Config: w.cfg, Store: w.store, Git: gitint.NewRepos(gittest.Env()),
		Layout: layout.New(filepath.Join(w.dir, "wave.hcl"), "w", filepath.Join(w.dir, "home"))}, now: time.Now}
	r.setUpSteps()
	run, err := r.settleIntegration(&node{lot: w.cfg.Lot("a"), plan: &planner.LotPlan{ID: "a", Action: action}})
	if err != nil {
		w.t.Fatal(err)
	}
	var l state.Lot
	w.store.View(func(st *state.State) { l = *st.Lots["a"] })
	return r, run, &l
}

func (w *intentWorld) base(path string) string { return w.git(path, "rev-parse", "main") }

// wantCompleted checks that both bases are at the lot's commits, the lead's
// checkouts with them, and the lot is recorded integrated, its intent gone.
func (w *intentWorld) wantCompleted(r *runner, run bool, l *state.Lot, moved ...string) {
	w.t.Helper()
	if !run {
		w.t.Errorf("the lot may not run: %s", l.Cause)
	}
	for name, path := range map[string]string{"app": w.app, "web": w.web} {
		if got := w.base(path); got != w.new[name] {
			w.t.Errorf("%s's main at %.12s, want %.12s", name, got, w.new[name])
		}
		if _, err := os.Stat(filepath.Join(path, name+".txt")); err != nil {
			w.t.Errorf("%s's checkout was not brought along: %v", name, err)
		}
	}
	if l.Integrating != nil || l.IntegratedSHA != w.new["app"] || !state.Integrated(l) {
		w.t.Errorf("lot: integrating %+v, integrated %q, steps %s", l.Integrating, l.IntegratedSHA, steps(l))
	}
	if l.Steps[0].Status != state.StepInterrupted {
		w.t.Errorf("the running integrate step is %s, want interrupted", l.Steps[0].Status)
	}
	// Every advance went through the ref ledger, as cadence's own move.
	for _, name := range moved {
		rp := w.cfg.Repo(name)
		ms := r.guard.OwnMoves(rp)
		if len(ms) != 1 || ms[0].Ref != "refs/heads/main" || ms[0].Old != w.old[name] || ms[0].New != w.new[name] || ms[0].Lot != "a" {
			w.t.Errorf("ledger of %s: %+v", name, ms)
		}
	}
}

// steps is the lot's steps as kind:status.
func steps(l *state.Lot) string {
	var out []string
	for _, s := range l.Steps {
		out = append(out, string(s.Kind)+":"+string(s.Status))
	}
	return strings.Join(out, " ")
}

// Cadence died after recording the intent, before any base moved: the
// next apply advances both.
func TestIntentNoneAdvanced(t *testing.T) {
	w := newIntentWorld(t)
	r, run, l := w.settle(planner.ActionResume)
	w.wantCompleted(r, run, l, "app", "web")
}

// Cadence died between the two advances: the next apply advances the
// second, and leaves the first.
func TestIntentFirstAdvanced(t *testing.T) {
	w := newIntentWorld(t)
	w.git(w.app, "merge", "-q", "--ff-only", "cadence/w/a")
	r, run, l := w.settle(planner.ActionResume)
	w.wantCompleted(r, run, l, "web")
	if ms := r.guard.OwnMoves(w.cfg.Repo("app")); len(ms) != 0 {
		t.Errorf("app's base was moved again: %+v", ms)
	}
}

// Cadence died after both advances, before recording the integration:
// nothing moves, the integration is recorded.
func TestIntentBothAdvanced(t *testing.T) {
	w := newIntentWorld(t)
	w.git(w.app, "merge", "-q", "--ff-only", "cadence/w/a")
	w.git(w.web, "merge", "-q", "--ff-only", "cadence/w/a")
	r, run, l := w.settle(planner.ActionResume)
	w.wantCompleted(r, run, l)
	if !strings.Contains(l.Steps[1].Cause, "repo web: main already at") {
		t.Errorf("cause %q", l.Steps[1].Cause)
	}
}

// The user moved web's base after cadence died: no base moves (app's
// stays where it was, unadvanced), the lot is interrupted with a cause
// naming web and what to do, its intent kept for the next apply.
func TestIntentBaseMovedByUser(t *testing.T) {
	w := newIntentWorld(t)
	w.commit(w.web, "user.txt")
	user := w.base(w.web)
	r, run, l := w.settle(planner.ActionResume)
	if run {
		t.Fatal("the lot may run although web's base moved")
	}
	if got := w.base(w.app); got != w.old["app"] {
		t.Errorf("app's main moved to %.12s", got)
	}
	if got := w.base(w.web); got != user {
		t.Errorf("web's main moved from the user's %.12s to %.12s", user, got)
	}
	if l.Status != state.LotInterrupted || !strings.Contains(l.Cause, "the base main of repo web is at "+user[:12]) ||
		!strings.Contains(l.Cause, "-replace a") || l.Integrating == nil {
		t.Errorf("lot %s (%s), integrating %+v", l.Status, l.Cause, l.Integrating)
	}
	if l.Steps[0].Status != state.StepInterrupted || len(l.Steps) != 1 {
		t.Errorf("steps %s", steps(l))
	}
	for _, name := range []string{"app", "web"} {
		if ms := r.guard.OwnMoves(w.cfg.Repo(name)); len(ms) != 0 {
			t.Errorf("%s's base was moved: %+v", name, ms)
		}
	}
	// Put back at its old commit, the next apply completes it.
	w.git(w.web, "reset", "-q", "--keep", w.old["web"])
	r, run, l = w.settle(planner.ActionResume)
	w.wantCompleted(r, run, l, "app", "web")
}

// -replace drops a recorded intent: nothing moves, the lot may run (its
// reset forgets the intent).
func TestIntentReplaceDrops(t *testing.T) {
	w := newIntentWorld(t)
	w.git(w.app, "merge", "-q", "--ff-only", "cadence/w/a")
	_, run, l := w.settle(planner.ActionReplace)
	if !run || w.base(w.web) != w.old["web"] || l.IntegratedSHA != "" {
		t.Errorf("run %v, web at %.12s, integrated %q", run, w.base(w.web), l.IntegratedSHA)
	}
}

// A lot with a neighbour whose integration is refused (the base's advance
// fails) leaves no intent behind: every base is where it was.
func TestIntentClearedOnRefusal(t *testing.T) {
	h := newHarness(t, twoRepos)
	h.git.integrate["cadence/w/c"] = errors.New("not a fast-forward")
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	c := h.lots()["c"]
	if c.Status != state.LotInterrupted || !strings.Contains(c.Cause, "integration into repo r refused") || c.Integrating != nil {
		t.Errorf("lot c %s (%s), integrating %+v", c.Status, c.Cause, c.Integrating)
	}
}

// A lot with a neighbour that integrates records the intent before the
// first advance and clears it with the integration.
func TestIntentRecordedThenCleared(t *testing.T) {
	h := newHarness(t, twoRepos)
	var seen *state.Integration
	h.git.onAdvance = func() {
		st, _, err := state.Read(filepath.Join(h.dir, "wave.state.json"))
		if err == nil && st.Lots["c"] != nil && seen == nil {
			seen = st.Lots["c"].Integrating
		}
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	if seen == nil || len(seen.Repos) != 2 || seen.Repos[0].Repo != "r" || seen.Repos[1].Repo != "lib" {
		t.Errorf("intent at the first advance: %+v", seen)
	}
	if c := h.lots()["c"]; c.Status != state.LotDone || c.Integrating != nil {
		t.Errorf("lot c %s (%s), integrating %+v", c.Status, c.Cause, c.Integrating)
	}
}
