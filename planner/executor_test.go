package planner

import (
	"errors"
	"testing"

	"github.com/cadence-run/cadence/spec"
)

// engineMachine is fakeMachine with an engine that answers facts, or err.
type engineMachine struct {
	fakeMachine
	facts RemoteFacts
	err   error
}

func (m engineMachine) Remote(*spec.Executor) (RemoteFacts, error) { return m.facts, m.err }

const remoteWave = `wave "w" {}
executor "nats" {
  url   = "nats://127.0.0.1:4222"
  queue = "team"
}
repo "r" {
  path = "."
  test = "true"
}
lot "a" {
  repo = repo.r
  run  = "true"
}
`

// TestPlanExecutor: the plan shows the executor block and what the
// engine said; a queue no live worker serves, or an engine that cannot be
// asked, is a warning (not a refusal) while remote steps are pending;
// LocalOnly (apply -executor local) leaves the block out; an offline plan
// shows the block without asking.
func TestPlanExecutor(t *testing.T) {
	cfg := mustLoad(t, remoteWave)
	ok := fakeMachine{repo: RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}}
	live := engineMachine{fakeMachine: ok, facts: RemoteFacts{Workers: []RemoteWorker{{ID: "w1", Slots: 2, Free: 2}}, Pool: RemotePool{Cap: 4, Free: 4}}}
	p, diags := build(t, cfg, nil, live, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	x := p.Executor
	if x == nil || x.Kind != "nats" || x.URL != "nats://127.0.0.1:4222" || x.Queue != "team" || !x.Asked || len(x.Workers) != 1 || x.Pool.Free != 4 {
		t.Fatalf("executor = %+v", x)
	}
	if hasWarning(p, WarnNoWorker, false) || hasWarning(p, WarnEngineClear, false) {
		t.Errorf("warnings with a live worker on loopback: %+v", p.Warnings)
	}
	p, _ = build(t, cfg, nil, engineMachine{fakeMachine: ok}, Options{})
	if !hasWarning(p, WarnNoWorker, false) {
		t.Errorf("no live worker: warnings %+v", p.Warnings)
	}
	p, _ = build(t, cfg, nil, engineMachine{fakeMachine: ok, err: errors.New("dial tcp 127.0.0.1:4222: connection refused")}, Options{})
	if !hasWarning(p, WarnNoWorker, false) || p.Executor.Asked || p.Executor.Err == "" {
		t.Errorf("engine down: executor %+v, warnings %+v", p.Executor, p.Warnings)
	}
	p, _ = build(t, cfg, nil, live, Options{LocalOnly: true})
	if p.Executor != nil {
		t.Errorf("LocalOnly: executor %+v", p.Executor)
	}
	p, _ = build(t, cfg, nil, nil, Options{})
	if p.Executor == nil || p.Executor.Asked || hasWarning(p, WarnNoWorker, false) {
		t.Errorf("offline: executor %+v, warnings %+v", p.Executor, p.Warnings)
	}
}
