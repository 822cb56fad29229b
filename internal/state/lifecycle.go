package state

import "fmt"

// This file is the lot life cycle (docs/agents.md, "The life cycle";
// docs/running.md, "State and resume") as pure functions:
// the one place that says which step comes next after each step's outcome,
// where a resumed lot goes on after each kind of stop, and when a lot is
// done, handed back, failed, suspended or waiting for an answer. The planner
// previews with Resume; the executor runs from Start or Resume and asks Next
// after every step. Neither keeps a copy of these rules.
//
// An agent lot:
//
//	[precheck] → implement → [test gate] → [ux] → review ─ conform ─→ [fix-minors → [test gate] → [ux] → review-recheck] → integrate → done
//	                               ↑                   └ not conform → fix (fresh session) ┘ at most fix_passes
//
// The UX review [ux] runs for a visible lot only (LotFacts.UX), after each
// write step and its test gate (docs/ux.md): not conform costs a fix pass
// as the code review does; otherwise the code review of the pass follows.
// A command lot: run → [test gate] → integrate → done (a lot without a
// repository has nothing to integrate: its integrate position ends it done).

// LotFacts are the facts of a lot's definition (the wave file) that its life
// cycle depends on. The planner and the executor fill them from the spec.
type LotFacts struct {
	// Command marks a command lot (a run step instead of agent sessions).
	Command bool
	// Repo says the lot works in a repository, so its work is integrated.
	Repo bool
	// Precheck says an agent lot starts with a read-only precheck.
	Precheck bool
	// TestGate says the lot's repository has a test command, run after each
	// write step (and after a command lot's run step).
	TestGate bool
	// Gates is how many test commands the test gate runs, one per
	// repository of the lot that has one (own first, then also), each
	// recorded as a test step; 0 counts as 1.
	Gates int
	// FixPasses is the most fix passes a red test gate or a review that is
	// not conform may cost (the wave's fix_passes).
	FixPasses int
	// Small lots skip the pass on minor findings.
	Small bool
	// UX says the lot gets a UX review after each write step and its
	// test gate, before the code review (spec.Lot.UXReview).
	UX bool
}

// Position is where a lot's life cycle stands: the step to run next, its
// pass (0 for implement and what follows it, n for the n-th fix pass and what
// follows it), and Minor for the steps of the pass on minor findings
// (fix-minors, its test gate, review-recheck).
type Position struct {
	Step  StepKind
	Pass  int
	Minor bool
}

// Start is where a lot that has run no step begins: the run step of a
// command lot, else the precheck when the lot has one, else implement.
func Start(f LotFacts) Position {
	switch {
	case f.Command:
		return Position{Step: StepRun}
	case f.Precheck:
		return Position{Step: StepPrecheck}
	}
	return Position{Step: StepImplement}
}

// OutcomeKind says how a step ended, as the life cycle sees it.
type OutcomeKind int

// Outcome kinds. The first group can end any step; the others belong to
// the steps named.
const (
	// OutcomeOK: the step did its job: a precheck that finds work to do, a
	// write step that left a clean tree and asked nothing, a green test gate,
	// a run command that exited 0, a conform review without minor findings,
	// an integration.
	OutcomeOK OutcomeKind = iota
	// OutcomeInterrupted: the step did not end by itself: cadence stopped
	// it (signal, cancel, a wait cut short) or the machine failed under it
	// (ENOSPC, EINTR, EAGAIN, the worktree could not be made); Detail is
	// the cause. Never a failure: the lot is interrupted, resumable
	// (docs/running.md, "State and resume").
	OutcomeInterrupted
	// OutcomeFailed: the session ended failed, timed-out or cut (Outcome.Status)
	// with Detail as its cause.
	OutcomeFailed
	// OutcomeQuota: the session hit a usage limit and on_quota = "suspend";
	// Detail is the agent's message.
	OutcomeQuota
	// OutcomeWaveBudget: the wave's budget is spent (or a usage limit
	// suspends it): no session starts. Detail says which, if given.
	OutcomeWaveBudget
	// OutcomeNoStart: the step could not be set up (no brief, no log
	// folder); Detail is the cause.
	OutcomeNoStart

	// OutcomeAlreadyDone: the precheck says the work is already done; Detail
	// is its evidence.
	OutcomeAlreadyDone
	// OutcomeLotBudget: the lot's budget leaves no room for a write pass and
	// the review after it; Detail says why.
	OutcomeLotBudget
	// OutcomeQuestions: a write step asked questions; Detail joins them.
	OutcomeQuestions
	// OutcomeDirty: a write step left uncommitted changes; Detail lists them.
	OutcomeDirty
	// OutcomeRed: the test gate, or a command lot's run command, exited
	// non-zero or timed out; Detail is the end of its output.
	OutcomeRed
	// OutcomeMinors: a conform review with minor findings.
	OutcomeMinors
	// OutcomeNotConform: a review with blocking or major findings; Detail
	// summarizes them.
	OutcomeNotConform
	// OutcomeUntrusted: a read-only step (precheck, review, re-review)
	// changed HEAD or the tree of a worktree, whatever way it ended.
	OutcomeUntrusted
	// OutcomeNoReport: a review gave no report.
	OutcomeNoReport
	// OutcomeRefused: integration did not happen (lock, conflict, rebase,
	// test gate red on the rebased branch, base not advanced); Detail says
	// why.
	OutcomeRefused
	// OutcomeIntegrationWaits: integration was refused for a reason
	// outside the lot (the user's checkout of the base has uncommitted
	// changes, the base moved during the test on the rebased branch, a
	// full disk); Detail says why. The lot's work stands: it stays at
	// integrate, and the next apply retries the integration only.
	OutcomeIntegrationWaits
	// OutcomeNoCommit: an implement or fix session ended ok but made no
	// commit in any of the lot's repositories, on a lot with no earlier
	// work (executor/reports.go); Detail says so, with its summary.
	OutcomeNoCommit
	// OutcomeUnfinished: a write step's own report says it did not finish
	// (schemas/implement.schema.json status "partial" or "blocked");
	// Detail quotes the status and the summary.
	OutcomeUnfinished
	// OutcomeAPI: the session ended on an API failure that pauses the lot
	// (the API stayed overloaded through cadence's retries, or refused the
	// credentials or credit, or could not be reached); Detail says which
	// and what to do. Never a failure: the lot is suspended, resumable.
	OutcomeAPI
)

var outcomeNames = [...]string{"ok", "interrupted", "failed", "quota", "wave-budget", "no-start",
	"already-done", "lot-budget", "questions", "dirty", "red", "minors", "not-conform", "untrusted", "no-report", "refused", "integration-waits",
	"no-commit", "unfinished", "api"}

func (k OutcomeKind) String() string {
	if int(k) < len(outcomeNames) {
		return outcomeNames[k]
	}
	return fmt.Sprintf("outcome(%d)", int(k))
}

// Outcome is how one step ended: its kind, the step status for
// OutcomeFailed (failed, timed-out, cut), and the detail the cause of the
// lot's end quotes.
type Outcome struct {
	Kind   OutcomeKind
	Status StepStatus
	Detail string
	// Repo names the neighbour repository (also) whose test gate was red
	// (OutcomeRed); empty for the lot's own repository.
	Repo string
}

// Transition is what follows a step: the position the lot goes on at, or
// (At nil) the end of the lot's run with its status and cause.
type Transition struct {
	// At is the next position; nil when the lot's run ends.
	At *Position
	// End is the lot's status when At is nil: done, handed-back, failed,
	// question, suspended, or interrupted (the next apply resumes it).
	End LotStatus
	// Cause explains End (empty for done).
	Cause string
}

// GoesOn reports whether the lot goes on (at t.At).
func (t Transition) GoesOn() bool { return t.At != nil }

func goOn(p Position) Transition { return Transition{At: &p} }

func end(st LotStatus, cause string) Transition { return Transition{End: st, Cause: cause} }

// Next says what follows a step at position at that ended with outcome o
// (docs/agents.md, "The life cycle"):
//
//   - interrupted (a signal, cadence's cancel, a machine error): the lot is
//     interrupted with the cause, never failed; wave budget spent, usage
//     limit or an API failure that pauses the lot: suspended; a failed, timed-out or cut session, or a step that
//     could not be set up: failed.
//   - precheck: already done hands the lot back with the evidence; else
//     implement.
//   - write step (implement, fix, fix-minors): questions stop the lot
//     (question); a dirty tree, a spent lot budget, no commit (implement,
//     fix) or a report that says it did not finish hands it back; else the
//     test gate, or without one the UX review of a visible lot, else the
//     review (review-recheck in the minor pass).
//   - test gate: green goes to the UX review of a visible lot, else the
//     review (review-recheck in the minor pass); red costs a fix pass, and after the last one hands the lot back.
//     A command lot's red test gate fails it.
//   - review, review-recheck: not conform costs a fix pass, and after the
//     last one hands the lot back with the findings; conform with minor
//     findings gets the minor pass (once, not for small lots, not from the
//     re-review); conform integrates. A review that changed the worktree
//     hands the lot back (verdict not trusted); one without report fails it.
//   - ux (a visible lot's UX review, docs/ux.md): not conform costs a fix
//     pass, and after the last one hands the lot back; otherwise (conform,
//     minor findings, not verified, no report) the review of the pass.
//   - run: a red command fails the lot; else the test gate, or integrate.
//   - integrate: done; refused for a reason of the lot (a conflict, a red
//     test gate on the rebased branch) hands the lot back; refused for a
//     reason outside it leaves it interrupted at integrate (docs/running.md,
//     "Integration waits").
func Next(f LotFacts, at Position, o Outcome) Transition {
	switch o.Kind {
	case OutcomeInterrupted:
		return end(LotInterrupted, firstNonEmpty(o.Detail, "stopped by cadence"))
	case OutcomeWaveBudget:
		return end(LotSuspended, firstNonEmpty(o.Detail, "the wave's budget is spent"))
	case OutcomeQuota:
		return end(LotSuspended, "usage limit: "+o.Detail)
	case OutcomeAPI:
		return end(LotSuspended, o.Detail)
	case OutcomeFailed:
		return end(LotFailed, fmt.Sprintf("%s session %s: %s", at.Step, o.Status, o.Detail))
	case OutcomeNoStart:
		return end(LotFailed, o.Detail)
	case OutcomeUntrusted:
		// A read-only step (precheck, review, re-review) that changed a
		// worktree, however it ended: handed back, its verdict unused.
		return end(LotHandedBack, firstNonEmpty(o.Detail, fmt.Sprintf("the %s changed the worktree (HEAD or files), so its verdict is not trusted", at.Step)))
	}
	switch at.Step {
	case StepPrecheck:
		switch o.Kind {
		case OutcomeOK:
			return goOn(Position{Step: StepImplement})
		case OutcomeAlreadyDone:
			return end(LotHandedBack, "the precheck says the work is already done: "+o.Detail)
		}
	case StepImplement, StepFix, StepFixMinors:
		switch o.Kind {
		case OutcomeOK:
			return goOn(afterWrite(f, at))
		case OutcomeQuestions:
			return end(LotQuestion, o.Detail)
		case OutcomeDirty, OutcomeLotBudget, OutcomeNoCommit, OutcomeUnfinished:
			return end(LotHandedBack, o.Detail)
		}
	case StepTest:
		switch {
		case o.Kind == OutcomeOK && f.Command:
			return goOn(Position{Step: StepIntegrate})
		case o.Kind == OutcomeOK:
			return goOn(uxOrReview(f, at))
		case o.Kind == OutcomeRed && f.Command:
			return end(LotFailed, "test gate failed: "+o.Detail)
		case o.Kind == OutcomeRed && at.Pass >= f.FixPasses:
			return end(LotHandedBack, fmt.Sprintf("test gate%s still red after %d fix pass(es)", ofRepo(o.Repo), f.FixPasses))
		case o.Kind == OutcomeRed:
			return goOn(Position{Step: StepFix, Pass: at.Pass + 1})
		}
	case StepReview, StepRecheck:
		switch o.Kind {
		case OutcomeMinors:
			if !at.Minor && !f.Small {
				return goOn(Position{Step: StepFixMinors, Pass: at.Pass, Minor: true})
			}
			return goOn(Position{Step: StepIntegrate, Pass: at.Pass})
		case OutcomeOK:
			return goOn(Position{Step: StepIntegrate, Pass: at.Pass})
		case OutcomeNotConform:
			if at.Pass >= f.FixPasses {
				cause := fmt.Sprintf("review not conform after %d fix pass(es)", f.FixPasses)
				if o.Detail != "" {
					cause += ": " + o.Detail
				}
				return end(LotHandedBack, cause)
			}
			return goOn(Position{Step: StepFix, Pass: at.Pass + 1})
		case OutcomeNoReport:
			return end(LotFailed, "the review gave no report")
		}
	case StepUX:
		switch o.Kind {
		case OutcomeOK, OutcomeMinors, OutcomeNoReport:
			// Minor UX findings stay among the lot's findings, for the
			// minor pass the code review's verdict leads to; a review
			// without report was recorded not verified.
			return goOn(review(at))
		case OutcomeNotConform:
			if at.Pass >= f.FixPasses {
				cause := fmt.Sprintf("UX review not conform after %d fix pass(es)", f.FixPasses)
				if o.Detail != "" {
					cause += ": " + o.Detail
				}
				return end(LotHandedBack, cause)
			}
			return goOn(Position{Step: StepFix, Pass: at.Pass + 1})
		}
	case StepRun:
		switch {
		case o.Kind == OutcomeOK && f.TestGate:
			return goOn(Position{Step: StepTest})
		case o.Kind == OutcomeOK:
			return goOn(Position{Step: StepIntegrate})
		case o.Kind == OutcomeRed:
			return end(LotFailed, o.Detail)
		}
	case StepIntegrate:
		switch o.Kind {
		case OutcomeOK:
			return end(LotDone, "")
		case OutcomeRefused:
			return end(LotHandedBack, o.Detail)
		case OutcomeIntegrationWaits:
			return end(LotInterrupted, "integration waits: "+o.Detail+"; cadence apply retries the integration only")
		}
	}
	return end(LotFailed, fmt.Sprintf("no step follows %s on outcome %s", at.Step, o.Kind))
}

// afterWrite is the step after a clean write step: its test gate, or the
// UX review or the review of its kind.
func afterWrite(f LotFacts, at Position) Position {
	if f.TestGate {
		return Position{Step: StepTest, Pass: at.Pass, Minor: at.Minor}
	}
	return uxOrReview(f, at)
}

// uxOrReview is the step after a write step and its test gate: the UX
// review of a visible lot, else the review of the pass.
func uxOrReview(f LotFacts, at Position) Position {
	if f.UX {
		return Position{Step: StepUX, Pass: at.Pass, Minor: at.Minor}
	}
	return review(at)
}

// review is the review of a pass: review-recheck in the minor pass.
func review(at Position) Position {
	if at.Minor {
		return Position{Step: StepRecheck, Pass: at.Pass, Minor: true}
	}
	return Position{Step: StepReview, Pass: at.Pass}
}

// ofRepo is " of repo NAME" for a neighbour repository, "" for the own.
func ofRepo(name string) string {
	if name == "" {
		return ""
	}
	return " of repo " + name
}
