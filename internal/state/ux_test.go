package state

import "testing"

// Facts of visible lots (a UX review after each write step).
var (
	visibleLot    = LotFacts{Repo: true, TestGate: true, FixPasses: 2, UX: true}
	visibleNoGate = LotFacts{Repo: true, FixPasses: 2, UX: true}
)

// TestNextUX: a visible lot's UX review runs after each write step and
// its test gate, before the code review; blocking or major UX findings
// cost a fix pass, minor ones go on to the code review (whose minor pass
// takes them); a UX review not verified (Outcome ok) goes on too.
func TestNextUX(t *testing.T) {
	goes := func(p Position) Transition { return Transition{At: &p} }
	ends := func(st LotStatus, cause string) Transition { return Transition{End: st, Cause: cause} }
	for _, c := range []struct {
		name string
		f    LotFacts
		at   Position
		o    Outcome
		want Transition
	}{
		{"green gate: the UX review", visibleLot, at(StepTest, 0), out(OutcomeOK), goes(at(StepUX, 0))},
		{"green gate after a fix: the UX review", visibleLot, at(StepTest, 2), out(OutcomeOK), goes(at(StepUX, 2))},
		{"green gate in the minor pass: the UX review", visibleLot, atMinor(StepTest, 1), out(OutcomeOK), goes(atMinor(StepUX, 1))},
		{"implement without a gate: the UX review", visibleNoGate, at(StepImplement, 0), out(OutcomeOK), goes(at(StepUX, 0))},
		{"fix-minors without a gate: the UX review", visibleNoGate, atMinor(StepFixMinors, 0), out(OutcomeOK), goes(atMinor(StepUX, 0))},
		{"a red gate still costs a fix pass", visibleLot, at(StepTest, 0), out(OutcomeRed), goes(at(StepFix, 1))},
		{"UX ok: the code review", visibleLot, at(StepUX, 0), out(OutcomeOK), goes(at(StepReview, 0))},
		{"UX minors: the code review", visibleLot, at(StepUX, 1), out(OutcomeMinors), goes(at(StepReview, 1))},
		{"UX ok in the minor pass: the re-review", visibleLot, atMinor(StepUX, 0), out(OutcomeOK), goes(atMinor(StepRecheck, 0))},
		{"UX not conform: a fix pass", visibleLot, at(StepUX, 0), outD(OutcomeNotConform, "blocking: the button is gone"), goes(at(StepFix, 1))},
		{"UX not conform in the minor pass: a fix pass", visibleLot, atMinor(StepUX, 1), out(OutcomeNotConform), goes(at(StepFix, 2))},
		{"UX not conform after the last pass: handed back", visibleLot, at(StepUX, 2), outD(OutcomeNotConform, "major: x"),
			ends(LotHandedBack, "UX review not conform after 2 fix pass(es): major: x")},
		{"UX without a report: the code review", visibleLot, at(StepUX, 0), out(OutcomeNoReport), goes(at(StepReview, 0))},
		{"UX failed session: failed like any session", visibleLot, at(StepUX, 0), Outcome{Kind: OutcomeFailed, Status: StepTimedOut, Detail: "after 25m"},
			ends(LotFailed, "ux session timed-out: after 25m")},
		{"UX changed the worktree: handed back", visibleLot, at(StepUX, 0), out(OutcomeUntrusted),
			ends(LotHandedBack, "the ux changed the worktree (HEAD or files), so its verdict is not trusted")},
		{"not visible: the code review", agentLot, at(StepTest, 0), out(OutcomeOK), goes(at(StepReview, 0))},
	} {
		if got := Next(c.f, c.at, c.o); !sameTransition(got, c.want) {
			t.Errorf("%s: Next = %s, want %s", c.name, show(got), show(c.want))
		}
	}
}

// TestResumeUX: a lot stopped after its UX review goes on where Next
// says, its verdict read back from the record.
func TestResumeUX(t *testing.T) {
	no, yes := false, true
	steps := func(last Step) *Lot {
		return &Lot{Status: LotInterrupted, Steps: []Step{
			{Kind: StepImplement, Status: StepOK}, {Kind: StepTest, Status: StepOK}, last}}
	}
	for _, c := range []struct {
		name     string
		l        *Lot
		findings []Finding
		want     Position
	}{
		{"UX conform: the code review", steps(Step{Kind: StepUX, Status: StepOK, Conform: &yes}), nil, at(StepReview, 0)},
		{"UX not verified (no verdict): the code review", steps(Step{Kind: StepUX, Status: StepOK}), nil, at(StepReview, 0)},
		{"UX not conform: a fix pass", steps(Step{Kind: StepUX, Status: StepOK, Conform: &no}), nil, at(StepFix, 1)},
		{"UX interrupted: replayed", steps(Step{Kind: StepUX, Status: StepInterrupted}), nil, at(StepUX, 0)},
		{"gate green: the UX review", &Lot{Status: LotInterrupted, Steps: []Step{{Kind: StepImplement, Status: StepOK}, {Kind: StepTest, Status: StepOK}}}, nil, at(StepUX, 0)},
	} {
		c.l.Findings = c.findings
		r := Resume(visibleLot, c.l)
		if r.Kind != ResumeAt || r.At != c.want {
			t.Errorf("%s: Resume = %+v, want at %+v", c.name, r, c.want)
		}
	}
}

// TestUXKind: the ux row of the step-kind table.
func TestUXKind(t *testing.T) {
	i, ok := Info(StepUX)
	if !ok || i.Runs != RunsAgent || !i.ReadOnly || !i.Browser || !i.RecordsVerdict || i.Writes ||
		i.Agent != AgentReview || i.Model != ModelReview || i.Timeout != TimeoutReview || i.Brief != "ux" || i.ReportSchema != "review.schema.json" {
		t.Errorf("Info(ux) = %+v", i)
	}
}

// TestValidateUXStep: screenshots and not_verified belong to a UX
// review, its screenshots are absolute .png paths, at most MaxScreenshots;
// ux findings have known severities.
func TestValidateUXStep(t *testing.T) {
	ok := &State{Lots: map[string]*Lot{"a": {Status: LotRunning, Steps: []Step{
		{Kind: StepUX, Status: StepOK, Screenshots: []string{"/logs/a/ux-0/page.png"}},
		{Kind: StepUX, Status: StepOK, NotVerified: "the app did not start"}}}}}
	if err := Validate(ok); err != nil {
		t.Errorf("a valid UX step: %v", err)
	}
	many := make([]string, MaxScreenshots+1)
	for i := range many {
		many[i] = "/l/x.png"
	}
	for name, st := range map[string]Step{
		"screenshots on a review":  {Kind: StepReview, Status: StepOK, Screenshots: []string{"/l/x.png"}},
		"not_verified on a review": {Kind: StepReview, Status: StepOK, NotVerified: "x"},
		"relative screenshot":      {Kind: StepUX, Status: StepOK, Screenshots: []string{"x.png"}},
		"not a png":                {Kind: StepUX, Status: StepOK, Screenshots: []string{"/l/x.sh"}},
		"unclean path":             {Kind: StepUX, Status: StepOK, Screenshots: []string{"/l/../x.png"}},
		"too many":                 {Kind: StepUX, Status: StepOK, Screenshots: many},
	} {
		s := &State{Lots: map[string]*Lot{"a": {Status: LotRunning, Steps: []Step{st}}}}
		if Validate(s) == nil {
			t.Errorf("%s: valid", name)
		}
	}
	bad := &State{Lots: map[string]*Lot{"a": {Status: LotRunning, UXFindings: []Finding{{Severity: "awful", Text: "x"}}}}}
	if Validate(bad) == nil {
		t.Error("a ux finding of an unknown severity is valid")
	}
}
