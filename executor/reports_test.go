package executor

import (
	"slices"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
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
