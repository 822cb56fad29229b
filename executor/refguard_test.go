package executor

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// TestSessionMovesRef: an agent session that moves a guarded ref (here
// the base) is an incident: the ref is put back, the session's step and
// the lot fail naming the ref and the rescue ref, no review runs, and the
// run's result carries the incident.
func TestSessionMovesRef(t *testing.T) {
	h := newHarness(t, "wave \"w\" {}\nrepo \"r\" {\n  path = \".\"\n}\n"+agentLots("a"))
	h.git.moveRef("refs/heads/main", "base0")
	h.git.moveRef("refs/heads/cadence/w/a", "ignored")
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if s.Step == state.StepImplement {
			h.git.moveRef("refs/heads/main", "evil")
			h.git.moveRef("refs/heads/cadence/w/a", "lot's own") // never guarded
		}
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok", Verdict: "fine"}}, time.Millisecond
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []gitint.RefMove{{Ref: "refs/heads/main", Old: "base0", New: "evil"}}
	if !reflect.DeepEqual(h.git.restored, want) {
		t.Errorf("restored %+v, want %+v", h.git.restored, want)
	}
	for _, s := range []string{"lot a: during its implement step, not by cadence: in repo r, refs/heads/main moved from base0 to evil (kept under refs/cadence/rescue/w/a/1); put back to base0"} {
		if !strings.Contains(res.Incident, s) {
			t.Errorf("incident %q does not say %q", res.Incident, s)
		}
	}
	a := h.lots()["a"]
	if a.Status != state.LotFailed || !strings.Contains(a.Cause, IncidentCause) || !strings.Contains(a.Cause, "refs/cadence/rescue/w/a/1") {
		t.Errorf("lot a %s: %s", a.Status, a.Cause)
	}
	for _, s := range a.Steps {
		if s.Kind == state.StepReview {
			t.Error("a review ran after the incident")
		}
	}
	if res.Status != state.WaveInterrupted {
		t.Errorf("wave %s", res.Status)
	}
}
