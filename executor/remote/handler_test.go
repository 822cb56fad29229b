package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// commitAgent is a session that commits a file named by its brief in its
// folder, then waits long enough for a checkpoint, and ends ok.
type commitAgent struct{}

func (commitAgent) Run(ctx context.Context, s agent.Session) agent.Outcome {
	if s.Started != nil {
		s.Started(os.Getpid())
	}
	name := strings.TrimPrefix(s.Brief, "commit ")
	if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(name+"\n"), 0o644); err != nil {
		return agent.Outcome{Status: state.StepFailed, Cause: err.Error()}
	}
	for _, args := range [][]string{{"add", name}, {"commit", "-qm", "a: add " + name}} {
		if out, err := gittest.Try(s.Dir, args...); err != nil {
			return agent.Outcome{Status: state.StepFailed, Cause: out}
		}
	}
	select {
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
	}
	return agent.Outcome{Status: state.StepOK, Report: &agent.Report{Summary: "done"}}
}

// worker serves the fixture's queue with the worker's Handler over
// step.Local (real git, commitAgent, no step sandbox) in cache.
func (f *fixture) worker(t *testing.T, cache string) {
	f.serve(t, Handler(WorkerOptions{Queue: f.q, Transport: f.tr, Dir: cache, Poll: 50 * time.Millisecond,
		Load: func(path string) (*spec.Config, error) {
			cfg, diags := spec.NewLoader().LoadFile(path, spec.Options{})
			if diags.HasErrors() {
				return nil, diags
			}
			return cfg, nil
		},
		NewLocal: func(cfg *spec.Config, _ []string) step.Runner {
			return step.NewLocal(step.LocalOptions{Config: cfg, Git: gitint.NewRepos(gittest.Env()), Agent: commitAgent{},
				Env: []string{"PATH=" + os.Getenv("PATH")}, NoSandbox: true, Home: t.TempDir()})
		}}))
}

// TestWorkerRunsSessionAndGate: a session runs on the worker with the
// local step runner in a clone of the bundles; its commit reaches the
// lead's lot branch and worktree through the result bundle; a test gate
// runs there too (green on the file, red without it); the run's folder on
// the worker is gone once it ended.
func TestWorkerRunsSessionAndGate(t *testing.T) {
	f := newFixture(t, `"sessions", "tests"`)
	cache := t.TempDir()
	f.worker(t, cache)
	req := request(f, state.StepImplement)
	req.Brief, req.Agent = "commit feature.txt", "claude"
	res, err := f.r.RunStep(ctx(t), req, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != state.StepOK || len(res.Commits) != 1 || !strings.HasSuffix(res.Commits[0], "a: add feature.txt") {
		t.Fatalf("result %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(f.wt, "feature.txt")); err != nil || string(b) != "feature.txt\n" {
		t.Errorf("lead worktree feature.txt: %q, %v", b, err)
	}
	if got := strings.TrimSpace(gittest.Git(t, f.repo, "log", "-1", "--format=%s", branch)); got != "a: add feature.txt" {
		t.Errorf("lot branch at %q", got)
	}
	gate := request(f, state.StepTest)
	gate.Command = "test -f feature.txt"
	if res, err := f.r.RunStep(ctx(t), gate, &recorder{}); err != nil || res.Status != state.StepOK {
		t.Errorf("green gate: %+v, %v", res, err)
	}
	gate.Command, gate.Pass = "test -f missing.txt", 1
	if res, err := f.r.RunStep(ctx(t), gate, &recorder{}); err != nil || res.Status != state.StepFailed {
		t.Errorf("red gate: %+v, %v", res, err)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "runs", "*")); len(left) != 0 {
		t.Errorf("run folders left on the worker: %v", left)
	}
}
