package executor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// TestStepNotRunWhenItsBeginFails: a step whose begin cannot be journalled
// (a full disk, an I/O error) never runs: nothing of it could be found,
// ended, recounted or recorded by the next apply (step.Events: EventBegin
// is taken in before the runner starts anything).
func TestStepNotRunWhenItsBeginFails(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "wave.hcl")
	os.WriteFile(file, []byte("wave \"w\" {\n}\nlot \"x\" {\n  run = \"true\"\n}\n"), 0o644)
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	store, err := state.OpenStore(filepath.Join(dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A store that can no longer write (as on a full disk): every
	// update, the step's begin first, fails.
	store.Close()
	r := &runner{o: Options{Config: cfg, Store: store, Env: []string{"PATH=" + os.Getenv("PATH")},
		Layout: layout.New(file, cfg.Wave.Name, filepath.Join(dir, "home"))}, now: time.Now}
	r.setUpSteps()
	lr := &lotRun{r: r, id: "x", n: &node{lot: cfg.Lot("x")}, dir: dir}
	marker := filepath.Join(dir, "ran")
	_, _, err = lr.shell(context.Background(), state.StepRun, 0, "touch "+marker, 0)
	if err == nil {
		t.Fatal("shell: no error, want the journal's")
	}
	if _, serr := os.Stat(marker); serr == nil {
		t.Fatalf("the run step's command ran although its begin could not be journalled (%v)", err)
	}
}

// remoteFileGit is the fake git whose remotes are what a file holds: a
// step that writes the file has pushed.
type remoteFileGit struct {
	*fakeGit
	file string
}

func (g remoteFileGit) RemoteState(context.Context, *spec.Repo) string {
	b, _ := os.ReadFile(g.file)
	return string(b)
}

// TestSetupPushOfAgentLotDetected: a worktree's setup command is watched
// as a command step is, the remotes included (shellRepos counts a setup):
// an agent lot of a repository with a setup and no test gate whose setup
// pushes stops the wave on an incident (the sessions' own push check reads
// the remotes after the setup, so it cannot see it).
func TestSetupPushOfAgentLotDetected(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote")
	os.WriteFile(remote, []byte("main=1\n"), 0o644)
	h := newHarness(t, `wave "w" {}
repo "r" {
  path  = "."
  setup = "echo main=2 > `+remote+`"
}
`+agentLots("a"))
	res, err := h.runWith(context.Background(), planner.Options{}, func(o *Options) {
		o.Git = remoteFileGit{fakeGit: h.git, file: remote}
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(remote); string(b) != "main=2\n" {
		t.Fatalf("the setup did not run (remote %q)", b)
	}
	if res.Incident == "" {
		t.Fatalf("a setup command changed the remotes of repo r (a push) and the wave ended without an incident (lot a: %s)", h.status("a"))
	}
}
