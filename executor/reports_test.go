package executor

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

func TestNonQuestion(t *testing.T) {
	for _, q := range []string{"", "   ", "\n\t", "N/A", "n/a", "n/a.", "NA", "na", "N.A.", "None", "none.", "NONE!", "no", "No.",
		"nothing", "Nothing.", "no questions", "No questions.", "No Questions!", "no question", "No  open  questions.",
		"-", "--", "—", "null", "NULL", "nil", "(none)", "[N/A]", `"none"`, "- None", "* n/a", "not applicable", "None at this time."} {
		if !nonQuestion(q) {
			t.Errorf("nonQuestion(%q) = false, want true", q)
		}
	}
	for _, q := range []string{"?", "None?", "n/a?", "No questions?", "Should f.txt hold f or F?", "Which port",
		"none of the tests cover x: add some", "no: the brief says both", "nobody", "nan", "Use -v?", "N/A — but which base"} {
		if nonQuestion(q) {
			t.Errorf("nonQuestion(%q) = true, want false", q)
		}
	}
}

func TestRealQuestions(t *testing.T) {
	real, dropped := realQuestions([]string{"N/A", "Which port?", "", "none", "Keep the old flag"})
	if want := []string{"Which port?", "Keep the old flag"}; !slices.Equal(real, want) {
		t.Errorf("real = %q, want %q", real, want)
	}
	if want := []string{"N/A", "", "none"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped = %q, want %q", dropped, want)
	}
	if real, dropped := realQuestions(nil); real != nil || dropped != nil {
		t.Errorf("no questions: %q %q", real, dropped)
	}
}

func TestUnfinished(t *testing.T) {
	for _, c := range []struct {
		r    *Report
		want string // "" for finished
	}{
		{nil, ""},
		{&Report{}, ""},
		{&Report{Status: "done", Summary: "added f"}, ""},
		{&Report{Status: "partial", Summary: " half of it "}, `implement reported "partial": half of it`},
		{&Report{Status: "blocked"}, `implement reported "blocked"`},
		{&Report{Status: "failed", Summary: "x"}, `implement reported "failed": x`},
	} {
		o, stop := unfinished(state.StepImplement, c.r)
		if stop != (c.want != "") || o.Detail != c.want || (stop && o.Kind != state.OutcomeUnfinished) {
			t.Errorf("unfinished(%+v) = %v %+v, want %q", c.r, stop, o, c.want)
		}
	}
}

// TestWriteWithoutCommit: a fix that made no commit hands the lot back; a
// fix-minors without commit goes on, with a warning; a lot whose write
// steps commit is not touched by the check.
func TestWriteWithoutCommit(t *testing.T) {
	h := newHarness(t, `wave "w" {}
repo "r" {
  path = "."
  parallel = 3
}
`+agentLots("nofix", "nominors", "commits"))
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Report: &Report{Status: "done", Summary: "did " + string(s.Step)}}
		switch {
		case s.Step == state.StepReview && s.Lot == "nofix":
			out.Report = &Report{Verdict: "no", Findings: []state.Finding{{Severity: "blocking", Text: "wrong"}}}
		case s.Step == state.StepReview && s.Lot == "nominors":
			out.Report = &Report{Verdict: "fine", Findings: []state.Finding{{Severity: "minor", Text: "rename x"}}}
		case s.ReadOnly:
			out.Report = &Report{Verdict: "fine"}
		}
		return out, time.Millisecond
	}
	h.agent.noCommit = func(s Session) bool { return s.Step == state.StepFix || s.Step == state.StepFixMinors }
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	lots := h.lots()
	if l := lots["nofix"]; l.Status != state.LotHandedBack || !strings.HasPrefix(l.Cause, "fix without commit: ") ||
		!strings.Contains(l.Cause, "did fix") || stepsOf(l) != "implement0 review0 fix1" {
		t.Errorf("nofix = %s (%s) %s", l.Status, l.Cause, stepsOf(l))
	}
	l := lots["nominors"]
	if l.Status != state.LotDone || stepsOf(l) != "implement0 review0 fix-minors0 review-recheck0 integrate0" {
		t.Errorf("nominors = %s (%s) %s", l.Status, l.Cause, stepsOf(l))
	}
	if !slices.Contains(l.Warnings, "the fix-minors session made no commit: the minor findings stand") {
		t.Errorf("nominors warnings %q", l.Warnings)
	}
	if l := lots["commits"]; l.Status != state.LotDone || len(l.Warnings) > 0 {
		t.Errorf("commits = %s (%s), warnings %q", l.Status, l.Cause, l.Warnings)
	}
}
