package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
)

// TestStatusShowsRemoteStep: a running lot whose step runs on a remote
// worker shows the worker, its delivery after a lost one, the time since
// the lead last heard of it and the tokens so far; a stopped wave or an
// ended step shows none of it.
func TestStatusShowsRemoteStep(t *testing.T) {
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	s := state.Step{Kind: state.StepImplement, Status: state.StepRunning,
		Remote: &state.RemoteStep{Worker: "build-1", RunKey: "k", Delivery: 2, Tokens: 12_300, Heard: now.Add(-4 * time.Second)}}
	if got, want := remoteNote(s, now), "on worker build-1 (delivery 2), heard 4s ago, 12.3k tokens so far"; got != want {
		t.Errorf("remoteNote = %q, want %q", got, want)
	}
	ended := s
	ended.Ended = &now
	if got := remoteNote(ended, now); got != "" {
		t.Errorf("ended step: %q", got)
	}
	st := &state.State{Lots: map[string]*state.Lot{"a": {Status: state.LotRunning, Steps: []state.Step{s}}}}
	var out bytes.Buffer
	stateTable(&out, st, false)
	if !strings.Contains(out.String(), "on worker build-1 (delivery 2)") {
		t.Errorf("status of a running remote step:\n%s", out.String())
	}
	out.Reset()
	stateTable(&out, st, true)
	if strings.Contains(out.String(), "on worker") {
		t.Errorf("status of a stopped wave shows the worker:\n%s", out.String())
	}
}
