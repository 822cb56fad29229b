package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// onBaseMachine is a Machine whose bases hold only the commits listed.
type onBaseMachine struct {
	fakeMachine
	on map[string]bool
}

func (m onBaseMachine) OnBase(_ *spec.Repo, commit string) (bool, error) { return m.on[commit], nil }

// doneRecord is a lot recorded done, integrated at sha.
func doneRecord(sha string) *state.Lot {
	now := time.Now().UTC()
	return &state.Lot{Status: state.LotDone, IntegratedSHA: sha,
		Steps: []state.Step{{Kind: state.StepIntegrate, Started: now, Ended: &now, Status: state.StepOK, HeadAfter: sha}}}
}

// TestDoneNotOnBase: a lot recorded done whose integrated commit its
// repository's base does not hold is not done: the plan holds it with the
// reason and blocks its dependents; a done lot whose commit is on the base
// stays done, and so does every done lot of an offline plan.
func TestDoneNotOnBase(t *testing.T) {
	on, off := strings.Repeat("a", 40), strings.Repeat("f", 40)
	st := &state.State{Lots: map[string]*state.Lot{"a": doneRecord(on), "b": doneRecord(off)}}
	m := onBaseMachine{fakeMachine{repo: RepoFacts{Exists: true, IsGit: true, BaseSHA: on},
		agent: AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328 (Claude Code)"}}, map[string]bool{on: true}}
	p, diags := build(t, mustLoad(t, chain), st, m, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	lots := byID(p)
	if lots["a"].Action != ActionDone {
		t.Errorf("a (on the base): %s", lots["a"].Action)
	}
	b := lots["b"]
	if b.Action != ActionHeld || b.HeldStatus != state.LotHandedBack || !strings.Contains(b.Reason, "not done: its integrated commit ffffffffffff is not on repo api's main") {
		t.Errorf("b (not on the base): %s %s (%s)", b.Action, b.HeldStatus, b.Reason)
	}
	if c := lots["c"]; c.Action != ActionBlocked || c.Reason != "b handed-back" {
		t.Errorf("c (after b): %s (%s)", c.Action, c.Reason)
	}
	p, _ = build(t, mustLoad(t, chain), st, nil, Options{})
	if b := byID(p)["b"]; b.Action != ActionDone {
		t.Errorf("offline, b: %s", b.Action)
	}
}
