package state

import (
	"strings"
	"testing"
)

// Facts of the lots the tables use.
var (
	agentLot   = LotFacts{Repo: true, TestGate: true, FixPasses: 2}
	noGate     = LotFacts{Repo: true, FixPasses: 2}
	smallLot   = LotFacts{Repo: true, TestGate: true, FixPasses: 2, Small: true}
	precheck   = LotFacts{Repo: true, TestGate: true, FixPasses: 2, Precheck: true}
	noFixes    = LotFacts{Repo: true, TestGate: true}
	commandLot = LotFacts{Command: true, Repo: true, TestGate: true}
	cmdNoGate  = LotFacts{Command: true, Repo: true}
	cmdNoRepo  = LotFacts{Command: true}
)

func at(k StepKind, pass int) Position      { return Position{Step: k, Pass: pass} }
func atMinor(k StepKind, pass int) Position { return Position{Step: k, Pass: pass, Minor: true} }
func out(k OutcomeKind) Outcome             { return Outcome{Kind: k} }
func outD(k OutcomeKind, d string) Outcome  { return Outcome{Kind: k, Detail: d} }

func TestStart(t *testing.T) {
	for _, c := range []struct {
		name string
		f    LotFacts
		want Position
	}{
		{"agent lot", agentLot, at(StepImplement, 0)},
		{"precheck", precheck, at(StepPrecheck, 0)},
		{"command lot", commandLot, at(StepRun, 0)},
		{"command lot, precheck ignored", LotFacts{Command: true, Precheck: true}, at(StepRun, 0)},
	} {
		if got := Start(c.f); got != c.want {
			t.Errorf("%s: Start = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestNext goes outcome by outcome, step by step: where the lot goes on,
// or how its run ends.
func TestNext(t *testing.T) {
	goes := func(p Position) Transition { return Transition{At: &p} }
	ends := func(st LotStatus, cause string) Transition { return Transition{End: st, Cause: cause} }
	for _, c := range []struct {
		name string
		f    LotFacts
		at   Position
		o    Outcome
		want Transition
	}{
		// Stops that end any step.
		{"interrupted session", agentLot, at(StepImplement, 0), out(OutcomeInterrupted), ends(LotInterrupted, "stopped by cadence")},
		{"interrupted test gate", agentLot, at(StepTest, 1), out(OutcomeInterrupted), ends(LotInterrupted, "stopped by cadence")},
		{"integrate interrupted", agentLot, at(StepIntegrate, 0), out(OutcomeInterrupted), ends(LotInterrupted, "stopped by cadence")},
		{"run interrupted", commandLot, at(StepRun, 0), out(OutcomeInterrupted), ends(LotInterrupted, "stopped by cadence")},
		{"run cut by a full disk: interrupted, not failed", commandLot, at(StepRun, 0),
			outD(OutcomeInterrupted, "write log: no space left on device"), ends(LotInterrupted, "write log: no space left on device")},
		{"worktree not made (cancelled): interrupted", agentLot, at(StepImplement, 0),
			outD(OutcomeInterrupted, "cannot make the worktree of repo r: context canceled"),
			ends(LotInterrupted, "cannot make the worktree of repo r: context canceled")},
		{"failed session", agentLot, at(StepReview, 0), Outcome{Kind: OutcomeFailed, Status: StepFailed, Detail: "exit 1"},
			ends(LotFailed, "review session failed: exit 1")},
		{"timed-out session", agentLot, at(StepImplement, 0), Outcome{Kind: OutcomeFailed, Status: StepTimedOut, Detail: "after 30m"},
			ends(LotFailed, "implement session timed-out: after 30m")},
		{"cut session", agentLot, at(StepFix, 1), Outcome{Kind: OutcomeFailed, Status: StepCut, Detail: "killed"},
			ends(LotFailed, "fix session cut: killed")},
		{"quota", agentLot, at(StepImplement, 0), outD(OutcomeQuota, "429"), ends(LotSuspended, "usage limit: 429")},
		{"wave budget", agentLot, at(StepReview, 0), out(OutcomeWaveBudget), ends(LotSuspended, "the wave's budget is spent")},
		{"no brief", agentLot, at(StepImplement, 0), outD(OutcomeNoStart, "no brief templates"), ends(LotFailed, "no brief templates")},

		// Precheck.
		{"precheck: work to do", precheck, at(StepPrecheck, 0), out(OutcomeOK), goes(at(StepImplement, 0))},
		{"precheck: already done", precheck, at(StepPrecheck, 0), outD(OutcomeAlreadyDone, "see a.go"),
			ends(LotHandedBack, "the precheck says the work is already done: see a.go")},

		// Write steps.
		{"implement ok, test gate", agentLot, at(StepImplement, 0), out(OutcomeOK), goes(at(StepTest, 0))},
		{"implement ok, no test gate", noGate, at(StepImplement, 0), out(OutcomeOK), goes(at(StepReview, 0))},
		{"fix ok, test gate", agentLot, at(StepFix, 2), out(OutcomeOK), goes(at(StepTest, 2))},
		{"fix-minors ok, test gate", agentLot, atMinor(StepFixMinors, 1), out(OutcomeOK), goes(atMinor(StepTest, 1))},
		{"fix-minors ok, no test gate", noGate, atMinor(StepFixMinors, 0), out(OutcomeOK), goes(atMinor(StepRecheck, 0))},
		{"questions", agentLot, at(StepImplement, 0), outD(OutcomeQuestions, "Which? / Where?"), ends(LotQuestion, "Which? / Where?")},
		{"dirty tree", agentLot, at(StepFix, 1), outD(OutcomeDirty, "left a.go"), ends(LotHandedBack, "left a.go")},
		{"lot budget", agentLot, at(StepFix, 1), outD(OutcomeLotBudget, "spent"), ends(LotHandedBack, "spent")},
		{"implement without commit", agentLot, at(StepImplement, 0), outD(OutcomeNoCommit, "implement without commit"),
			ends(LotHandedBack, "implement without commit")},
		{"fix without commit", agentLot, at(StepFix, 2), outD(OutcomeNoCommit, "fix without commit"), ends(LotHandedBack, "fix without commit")},
		{"report: blocked", agentLot, at(StepImplement, 0), outD(OutcomeUnfinished, `implement reported "blocked": no API key`),
			ends(LotHandedBack, `implement reported "blocked": no API key`)},
		{"report: partial fix-minors", agentLot, atMinor(StepFixMinors, 1), outD(OutcomeUnfinished, `fix-minors reported "partial"`),
			ends(LotHandedBack, `fix-minors reported "partial"`)},

		// Test gate.
		{"green", agentLot, at(StepTest, 0), out(OutcomeOK), goes(at(StepReview, 0))},
		{"green in the minor pass", agentLot, atMinor(StepTest, 0), out(OutcomeOK), goes(atMinor(StepRecheck, 0))},
		{"red, fix pass left", agentLot, at(StepTest, 1), out(OutcomeRed), goes(at(StepFix, 2))},
		{"red in the minor pass: a full fix", agentLot, atMinor(StepTest, 0), out(OutcomeRed), goes(at(StepFix, 1))},
		{"red after the last fix pass", agentLot, at(StepTest, 2), out(OutcomeRed),
			ends(LotHandedBack, "test gate still red after 2 fix pass(es)")},
		{"a neighbour's gate red after the last fix pass", agentLot, at(StepTest, 2), Outcome{Kind: OutcomeRed, Repo: "web"},
			ends(LotHandedBack, "test gate of repo web still red after 2 fix pass(es)")},
		{"red, no fix passes", noFixes, at(StepTest, 0), out(OutcomeRed),
			ends(LotHandedBack, "test gate still red after 0 fix pass(es)")},

		// Review.
		{"conform", agentLot, at(StepReview, 0), out(OutcomeOK), goes(at(StepIntegrate, 0))},
		{"conform with minors", agentLot, at(StepReview, 1), out(OutcomeMinors), goes(atMinor(StepFixMinors, 1))},
		{"minors, small lot", smallLot, at(StepReview, 0), out(OutcomeMinors), goes(at(StepIntegrate, 0))},
		{"minors at the re-review", agentLot, atMinor(StepRecheck, 0), out(OutcomeMinors), goes(at(StepIntegrate, 0))},
		{"re-review conform", agentLot, atMinor(StepRecheck, 1), out(OutcomeOK), goes(at(StepIntegrate, 1))},
		{"not conform, fix pass left", agentLot, at(StepReview, 0), outD(OutcomeNotConform, "major: x"), goes(at(StepFix, 1))},
		{"re-review not conform: a full fix", agentLot, atMinor(StepRecheck, 0), out(OutcomeNotConform), goes(at(StepFix, 1))},
		{"not conform after the last fix pass", agentLot, at(StepReview, 2), outD(OutcomeNotConform, "major: x"),
			ends(LotHandedBack, "review not conform after 2 fix pass(es): major: x")},
		{"not conform, no fix passes", noFixes, at(StepReview, 0), out(OutcomeNotConform),
			ends(LotHandedBack, "review not conform after 0 fix pass(es)")},
		{"review changed the tree", agentLot, at(StepReview, 0), out(OutcomeUntrusted),
			ends(LotHandedBack, "the review changed the worktree (HEAD or files), so its verdict is not trusted")},
		{"review without report", agentLot, at(StepReview, 0), out(OutcomeNoReport), ends(LotFailed, "the review gave no report")},

		// Command lots.
		{"run ok, test gate", commandLot, at(StepRun, 0), out(OutcomeOK), goes(at(StepTest, 0))},
		{"run ok, no test gate", cmdNoGate, at(StepRun, 0), out(OutcomeOK), goes(at(StepIntegrate, 0))},
		{"run ok, no repo", cmdNoRepo, at(StepRun, 0), out(OutcomeOK), goes(at(StepIntegrate, 0))},
		{"run red", commandLot, at(StepRun, 0), outD(OutcomeRed, "exit 2"), ends(LotFailed, "exit 2")},
		{"command test green", commandLot, at(StepTest, 0), out(OutcomeOK), goes(at(StepIntegrate, 0))},
		{"command test red", commandLot, at(StepTest, 0), outD(OutcomeRed, "exit 1"), ends(LotFailed, "test gate failed: exit 1")},

		// Integrate.
		{"integrated", agentLot, at(StepIntegrate, 0), out(OutcomeOK), ends(LotDone, "")},
		{"command lot integrated", commandLot, at(StepIntegrate, 0), out(OutcomeOK), ends(LotDone, "")},
		{"nothing to integrate", cmdNoRepo, at(StepIntegrate, 0), out(OutcomeOK), ends(LotDone, "")},
		{"integration refused", agentLot, at(StepIntegrate, 0), outD(OutcomeRefused, "conflict in a.go"), ends(LotHandedBack, "conflict in a.go")},
		{"integration waits on a dirty checkout of the base", agentLot, at(StepIntegrate, 0),
			outD(OutcomeIntegrationWaits, "/src has main checked out with uncommitted changes to a.go"),
			ends(LotInterrupted, "integration waits: /src has main checked out with uncommitted changes to a.go; cadence apply retries the integration only")},
		{"command lot: integration waits on a moved base", commandLot, at(StepIntegrate, 0),
			outD(OutcomeIntegrationWaits, "the base moved"),
			ends(LotInterrupted, "integration waits: the base moved; cadence apply retries the integration only")},
		{"conflict fix left a dirty tree", agentLot, at(StepFix, 3), outD(OutcomeDirty, "left b.go"), ends(LotHandedBack, "left b.go")},

		// An outcome the step cannot have.
		{"questions from a review", agentLot, at(StepReview, 0), out(OutcomeQuestions),
			ends(LotFailed, "no step follows review on outcome questions")},
		{"no commit from a review", agentLot, at(StepReview, 0), out(OutcomeNoCommit),
			ends(LotFailed, "no step follows review on outcome no-commit")},
	} {
		got := Next(c.f, c.at, c.o)
		if !sameTransition(got, c.want) {
			t.Errorf("%s: Next(%+v, %s) = %s, want %s", c.name, c.at, c.o.Kind, show(got), show(c.want))
		}
	}
}

func sameTransition(a, b Transition) bool {
	if (a.At == nil) != (b.At == nil) {
		return false
	}
	if a.At != nil {
		return *a.At == *b.At
	}
	return a.End == b.End && a.Cause == b.Cause
}

func show(t Transition) string {
	if t.At != nil {
		return "go on at " + showPos(*t.At)
	}
	return "end " + string(t.End) + " (" + t.Cause + ")"
}

func showPos(p Position) string {
	s := string(p.Step) + string(rune('0'+p.Pass))
	if p.Minor {
		s += " minor"
	}
	return s
}

func TestOutcomeKindString(t *testing.T) {
	if OutcomeIntegrationWaits.String() != "integration-waits" {
		t.Errorf("name: %s", OutcomeIntegrationWaits)
	}
	if OutcomeNoCommit.String() != "no-commit" || OutcomeUnfinished.String() != "unfinished" {
		t.Errorf("names: %s %s", OutcomeNoCommit, OutcomeUnfinished)
	}
	if OutcomeRefused.String() != "refused" || OutcomeOK.String() != "ok" || !strings.HasPrefix(OutcomeKind(99).String(), "outcome(") {
		t.Errorf("names: %s %s %s", OutcomeRefused, OutcomeOK, OutcomeKind(99))
	}
}
