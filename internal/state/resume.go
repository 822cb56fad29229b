package state

import "fmt"

// ResumeKind says what the next apply does with a lot recorded in the state.
type ResumeKind int

// Resume kinds.
const (
	// ResumeStart: the lot has run no step; it begins at Start.
	ResumeStart ResumeKind = iota
	// ResumeAt: the lot goes on at Resumption.At.
	ResumeAt
	// ResumeDone: the lot is done; nothing to do.
	ResumeDone
	// ResumeAnswer: the lot waits for `cadence answer` to its question.
	ResumeAnswer
	// ResumeHeld: the lot needs the lead: handed back, failed, or its last
	// review was not conform with no fix pass left.
	ResumeHeld
)

// Resumption is where a lot recorded in the state goes on.
type Resumption struct {
	Kind ResumeKind
	// At is the position for ResumeStart and ResumeAt.
	At Position
	// Status is the status the lot keeps (ResumeDone, ResumeAnswer,
	// ResumeHeld).
	Status LotStatus
	// Reason explains ResumeAnswer (the pending question) and ResumeHeld
	// ("<status>: <cause>", or why no fix pass is left).
	Reason string
	// Cause is the cause to record when the resumption itself ends the lot
	// (no fix pass left); empty when the recorded cause stands.
	Cause string
}

// Resume says where a lot recorded in the state goes on (docs/running.md,
// "State and resume").
// A nil lot, or one without steps, starts. A done lot is done; a handed-back
// or failed one is held; a question not yet answered waits for its answer.
// An interrupted lot (a signal, a machine error, an integration that waits
// on something outside it) is never held. Otherwise:
//
//   - an answered question replays the step that asked it, in a fresh
//     session with the answer in its brief;
//   - once integration began (a test gate on the rebased branch may follow
//     it), integration is what goes on;
//   - a step that did not end ok (interrupted, failed, timed out, cut,
//     quota, a red test gate) is replayed whole;
//   - after a step that ended ok, the lot goes on where Next says, with the
//     outcome read back from the record (a review's verdict and the lot's
//     findings); when that ends the lot (a review not conform and no fix pass
//     left) the lot is held.
func Resume(f LotFacts, l *Lot) Resumption {
	switch {
	case l == nil:
		return Resumption{Kind: ResumeStart, At: Start(f)}
	case l.Status == LotDone:
		return Resumption{Kind: ResumeDone, Status: LotDone}
	case l.Status == LotHandedBack || l.Status == LotFailed:
		return Resumption{Kind: ResumeHeld, Status: l.Status,
			Reason: fmt.Sprintf("%s: %s", l.Status, firstNonEmpty(l.Cause, l.Outcome, "see cadence logs"))}
	case l.Dropped != "":
		// Dropped while a step ran, and cadence stopped before the lot
		// was handed back: it is.
		return Resumption{Kind: ResumeHeld, Status: LotHandedBack, Reason: "handed-back: " + droppedCause(l.Dropped)}
	case l.Status == LotQuestion && l.Pending() != nil:
		return Resumption{Kind: ResumeAnswer, Status: LotQuestion, Reason: l.Pending().Text}
	case len(l.Steps) == 0:
		return Resumption{Kind: ResumeStart, At: Start(f)}
	}
	minor := lastWriteMinor(l.Steps)
	// at is a position of the recorded steps: Minor marks the pass on
	// minor findings (its test gate too, when the last write step was it).
	at := func(k StepKind, pass int) Resumption {
		m := k == StepFixMinors || k == StepRecheck || ((k == StepTest || k == StepUX) && minor)
		return Resumption{Kind: ResumeAt, At: Position{Step: k, Pass: pass, Minor: m}}
	}
	if l.Status == LotQuestion && len(l.Questions) > 0 {
		if i := l.Questions[len(l.Questions)-1].Step; i >= 0 && i < len(l.Steps) {
			return at(l.Steps[i].Kind, l.Steps[i].Pass)
		}
	}
	for i := len(l.Steps) - 1; i >= 0; i-- {
		k := l.Steps[i].Kind
		if k == StepIntegrate {
			return at(StepIntegrate, 0)
		}
		if k != StepTest {
			break
		}
	}
	last := l.Steps[len(l.Steps)-1]
	if last.Status != StepOK || last.Kind == StepTest && !gatePassed(f, l.Steps) {
		return at(last.Kind, last.Pass)
	}
	t := Next(f, at(last.Kind, last.Pass).At, recorded(last, l.Findings))
	if t.GoesOn() {
		return Resumption{Kind: ResumeAt, At: *t.At}
	}
	if t.End == LotDone {
		// Every step ended ok but the lot's end was not recorded (a
		// command lot without repository killed after its run): the
		// integrate position records it.
		return at(StepIntegrate, 0)
	}
	return Resumption{Kind: ResumeHeld, Status: t.End, Reason: t.Cause, Cause: t.Cause}
}

// gatePassed reports whether the test gate whose step ends steps passed
// whole: its last f.Gates steps (one per repository with a test command)
// are test steps of the same pass, each ok, of as many repositories. A
// gate cut short after some of its repositories, or red in one of them, is
// replayed whole.
func gatePassed(f LotFacts, steps []Step) bool {
	n := max(f.Gates, 1)
	if len(steps) < n {
		return false
	}
	last := steps[len(steps)-1]
	repos := map[string]bool{}
	for _, s := range steps[len(steps)-n:] {
		if s.Kind != StepTest || s.Status != StepOK || s.Pass != last.Pass {
			return false
		}
		repos[s.Repo] = true
	}
	return len(repos) == n
}

// recorded is the outcome of a step that ended ok, read back from the
// record: a review's verdict (no verdict recorded counts as conform, as
// the step ended ok) and, for a conform one, whether the lot's findings hold
// a minor one.
func recorded(s Step, findings []Finding) Outcome {
	if info, _ := Info(s.Kind); !info.RecordsVerdict {
		return Outcome{Kind: OutcomeOK}
	}
	switch {
	case s.Conform != nil && !*s.Conform:
		return Outcome{Kind: OutcomeNotConform}
	case HasMinor(findings):
		return Outcome{Kind: OutcomeMinors}
	}
	return Outcome{Kind: OutcomeOK}
}

// lastWriteMinor reports whether the lot's last write step was its pass on
// minor findings (so its test gate leads to the re-review).
func lastWriteMinor(steps []Step) bool {
	minor := false
	for _, s := range steps {
		switch s.Kind {
		case StepFixMinors:
			minor = true
		case StepImplement, StepFix:
			minor = false
		}
	}
	return minor
}

// Integrated reports whether the lot's last step is a successful
// integration with its commit recorded: cadence stopped after integrating
// (maybe while removing the worktree), so only the tidying is left.
func Integrated(l *Lot) bool {
	if l == nil || len(l.Steps) == 0 {
		return false
	}
	last := l.Steps[len(l.Steps)-1]
	return last.Kind == StepIntegrate && last.Status == StepOK && l.IntegratedSHA != ""
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
