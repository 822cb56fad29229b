package executor

import (
	"context"
	"testing"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// remoteStub is a step runner whose steps run "on a worker": it begins
// the step, tells the worker and run key it started on, reports tokens so
// far, and ends it OK; everything else is step.Local's.
type remoteStub struct{ step.Runner }

func (remoteStub) RunStep(ctx context.Context, req step.Request, events step.Events) (step.Result, error) {
	for _, e := range []step.Event{
		{Kind: step.EventBegin},
		{Kind: step.EventStarted, Worker: "build-1", RunKey: "w.x.run.1", Delivery: 2},
		{Kind: step.EventProgress, Worker: "build-1", RunKey: "w.x.run.1", Delivery: 2, Usage: state.Usage{Input: 1000, Output: 234}},
	} {
		if err := events.Emit(e); err != nil {
			return step.Result{}, err
		}
	}
	return step.Result{Status: state.StepOK}, nil
}

// TestRemoteStepRecorded: the worker a step runs on, its run key and
// delivery, and the tokens it reported so far are written to the step's
// state (state.Step.Remote) from the runner's events, for status.
func TestRemoteStepRecorded(t *testing.T) {
	h := newHarness(t, "wave \"w\" {}\nlot \"x\" {\n  run = \"true\"\n}\n")
	if _, err := h.runWith(context.Background(), planner.Options{}, func(o *Options) {
		o.Steps = func(lo step.LocalOptions) step.Runner { return remoteStub{step.NewLocal(lo)} }
	}); err != nil {
		t.Fatal(err)
	}
	l := h.lots()["x"]
	if l == nil || len(l.Steps) != 1 {
		t.Fatalf("lot x: %+v", l)
	}
	r := l.Steps[0].Remote
	if r == nil || r.Worker != "build-1" || r.RunKey != "w.x.run.1" || r.Delivery != 2 || r.Tokens != 1234 || r.Heard.IsZero() {
		t.Fatalf("remote = %+v", r)
	}
	if l.Steps[0].PID != 0 {
		t.Errorf("a remote step's pid %d is recorded: no process of it runs here", l.Steps[0].PID)
	}
}
