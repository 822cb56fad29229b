package state

import (
	"strings"
	"testing"
	"time"
)

func TestDroppable(t *testing.T) {
	for _, c := range []struct {
		name string
		lot  *Lot
		want string // "" or a part of the refusal
	}{
		{"never run", nil, ""},
		{"queued", &Lot{Status: LotQueued}, ""},
		{"question", &Lot{Status: LotQuestion, Questions: []Question{{Text: "?"}}}, ""},
		{"interrupted", &Lot{Status: LotInterrupted, Steps: []Step{{Kind: StepReview, Status: StepInterrupted}}}, ""},
		{"done", &Lot{Status: LotDone}, "it is done"},
		{"integrated", &Lot{Status: LotRunning, IntegratedSHA: "abc"}, "it is done"},
		{"handed back", &Lot{Status: LotHandedBack, Cause: "x"}, "already handed-back (x)"},
		{"failed", &Lot{Status: LotFailed}, "already failed"},
		{"integrating", &Lot{Status: LotInterrupted, Steps: []Step{{Kind: StepIntegrate, Status: StepInterrupted}}}, "integration has begun"},
		{"intent", &Lot{Status: LotRunning, Integrating: &Integration{}}, "integration has begun"},
	} {
		got := Droppable(c.lot)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: Droppable = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDrop(t *testing.T) {
	l := &Lot{Status: LotRunning, BlockedBy: "x", Steps: []Step{{Kind: StepImplement, Status: StepRunning}}}
	l.Drop("after its implement step", time.Now())
	if l.Status != LotHandedBack || l.Cause != DroppedCause+" (after its implement step)" || l.BlockedBy != "" {
		t.Errorf("lot %+v", l)
	}
	if s := l.Steps[0]; s.Status != StepInterrupted || s.Ended == nil {
		t.Errorf("a running step stays running: %+v", s)
	}
	if r := Resume(LotFacts{Repo: true}, l); r.Kind != ResumeHeld {
		t.Errorf("a dropped lot resumes: %+v", r)
	}
}
