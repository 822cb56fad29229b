package step_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/steptest"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
)

// wire is a step.Runner that sends every value crossing the seam through
// JSON before the runner it wraps sees it, and every value coming back
// through JSON before its caller does, as a runner on another machine
// would: what does not survive the trip (a file, a func, an interface
// without its type) fails the test that sent it.
type wire struct {
	t     *testing.T
	inner step.Runner
}

// trip sends v through JSON into a new value of the same type and fails
// the test when it does not come back equal.
func trip[T any](t *testing.T, what string, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s does not encode: %v", what, err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s does not decode: %v", what, err)
	}
	if !reflect.DeepEqual(v, out) {
		t.Fatalf("%s changed on the wire:\nsent %#v\ngot  %#v", what, v, out)
	}
	return out
}

func (w wire) RunStep(ctx context.Context, req step.Request, events step.Events) (step.Result, error) {
	res, err := w.inner.RunStep(ctx, trip(w.t, "a request", req), wireEvents{w.t, events})
	return trip(w.t, "a result", res), err
}

// wireEvents sends each event through JSON, and the receiver's answer
// back as text, as a request and its reply would.
type wireEvents struct {
	t     *testing.T
	inner step.Events
}

func (e wireEvents) Emit(ev step.Event) error {
	if err := e.inner.Emit(trip(e.t, "an event", ev)); err != nil {
		return errors.New(trip(e.t, "an event's refusal", err.Error()))
	}
	return nil
}

func (w wire) ResetForReplay(ctx context.Context, lot step.Lot, repo, to string) (string, error) {
	return w.inner.ResetForReplay(ctx, trip(w.t, "a lot", lot), repo, to)
}

func (w wire) Prepare(ctx context.Context, req step.PrepareRequest) (step.Prepared, error) {
	p, err := w.inner.Prepare(ctx, trip(w.t, "a prepare request", req))
	return trip(w.t, "a preparation", p), err
}

func (w wire) SetAside(ctx context.Context, lot step.Lot) (map[string]string, error) {
	m, err := w.inner.SetAside(ctx, trip(w.t, "a lot", lot))
	return trip(w.t, "backups", m), err
}

func (w wire) RemoveWorktrees(ctx context.Context, lot step.Lot) error {
	return w.inner.RemoveWorktrees(ctx, trip(w.t, "a lot", lot))
}

func (w wire) Look(ctx context.Context, req step.LookRequest) ([]step.Looked, error) {
	l, err := w.inner.Look(ctx, trip(w.t, "a look request", req))
	return trip(w.t, "what was looked at", l), err
}

func (w wire) GuardEnv(ctx context.Context) ([]string, error) {
	env, err := w.inner.GuardEnv(ctx)
	return trip(w.t, "the guard environment", env), err
}

func (w wire) EndLeftovers(ctx context.Context, waveID string) (step.Leftovers, error) {
	l, err := w.inner.EndLeftovers(ctx, waveID)
	return trip(w.t, "leftovers", l), err
}

func (w wire) Leftover(ctx context.Context, req step.LeftoverRequest) (step.Leftover, error) {
	l, err := w.inner.Leftover(ctx, trip(w.t, "a leftover request", req))
	return trip(w.t, "a leftover", l), err
}

func (w wire) Recount(ctx context.Context, req step.RecountRequest) (agent.Spent, bool, error) {
	s, ok, err := w.inner.Recount(ctx, trip(w.t, "a recount request", req))
	return trip(w.t, "a recount", s), ok, err
}

func (w wire) Tidy(ctx context.Context, worktrees []string, before time.Time) ([]string, error) {
	removed, err := w.inner.Tidy(ctx, trip(w.t, "worktrees", worktrees), before)
	return trip(w.t, "removed paths", removed), err
}

// TestWireConformance runs the conformance suite against the local runner
// behind the wire: the seam carries data only (step.Runner's contract),
// so a runner on another machine can implement it.
func TestWireConformance(t *testing.T) {
	steptest.Run(t, func(t *testing.T, w steptest.Wave) step.Runner {
		return wire{t: t, inner: step.NewLocal(step.LocalOptions{Config: w.Config, Git: gitint.NewRepos(gittest.Env()), Agent: steptest.BriefAgent{}})}
	})
}
