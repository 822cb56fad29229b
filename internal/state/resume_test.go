package state

import (
	"encoding/json"
	"testing"
)

func ok(k StepKind, pass int) Step { return Step{Kind: k, Pass: pass, Status: StepOK} }
func ended(k StepKind, pass int, st StepStatus) Step {
	return Step{Kind: k, Pass: pass, Status: st}
}
func reviewed(k StepKind, pass int, conform bool) Step {
	s := ok(k, pass)
	s.Conform = &conform
	return s
}

var (
	minorFinding = []Finding{{Severity: SeverityMinor, Text: "rename x"}}
	majorFinding = []Finding{{Severity: SeverityMajor, Text: "wrong"}}
)

// twoGates is an agent lot with a neighbour repository that has a test
// gate too.
var twoGates = LotFacts{Repo: true, TestGate: true, Gates: 2, FixPasses: 2}

func gateOf(repo string, s Step) Step { s.Repo = repo; return s }

// TestResume goes lot status by lot status and stop by stop: where a lot
// recorded in the state goes on, or why it does not.
func TestResume(t *testing.T) {
	goOn := func(p Position) Resumption { return Resumption{Kind: ResumeAt, At: p} }
	start := func(p Position) Resumption { return Resumption{Kind: ResumeStart, At: p} }
	held := func(st LotStatus, reason, cause string) Resumption {
		return Resumption{Kind: ResumeHeld, Status: st, Reason: reason, Cause: cause}
	}
	for _, c := range []struct {
		name string
		f    LotFacts
		lot  *Lot
		want Resumption
	}{
		// Every lot status.
		{"no record", agentLot, nil, start(at(StepImplement, 0))},
		{"no record, precheck", precheck, nil, start(at(StepPrecheck, 0))},
		{"no record, command lot", commandLot, nil, start(at(StepRun, 0))},
		{"queued, no step", agentLot, &Lot{Status: LotQueued}, start(at(StepImplement, 0))},
		{"blocked before it started", agentLot, &Lot{Status: LotBlocked, BlockedBy: "a handed-back"}, start(at(StepImplement, 0))},
		{"suspended before it started", agentLot, &Lot{Status: LotSuspended}, start(at(StepImplement, 0))},
		{"done", agentLot, &Lot{Status: LotDone, Steps: []Step{ok(StepImplement, 0)}}, Resumption{Kind: ResumeDone, Status: LotDone}},
		{"handed back", agentLot, &Lot{Status: LotHandedBack, Cause: "tree left dirty"},
			held(LotHandedBack, "handed-back: tree left dirty", "")},
		{"failed, outcome only", agentLot, &Lot{Status: LotFailed, Outcome: "boom"}, held(LotFailed, "failed: boom", "")},
		{"failed, no cause", agentLot, &Lot{Status: LotFailed}, held(LotFailed, "failed: see cadence logs", "")},
		{"question pending", agentLot, &Lot{Status: LotQuestion, Steps: []Step{ok(StepImplement, 0)},
			Questions: []Question{{Step: 0, Text: "Which store?"}}},
			Resumption{Kind: ResumeAnswer, Status: LotQuestion, Reason: "Which store?"}},
		{"question answered: the step is replayed", agentLot, &Lot{Status: LotQuestion, Steps: []Step{ok(StepImplement, 0)},
			Questions: []Question{{Step: 0, Text: "Which?", Answer: "That"}}}, goOn(at(StepImplement, 0))},
		{"question of a fix pass answered", agentLot, &Lot{Status: LotQuestion,
			Steps:     []Step{ok(StepImplement, 0), ok(StepTest, 0), reviewed(StepReview, 0, false), ok(StepFix, 1)},
			Questions: []Question{{Step: 3, Text: "Which?", Answer: "That"}}}, goOn(at(StepFix, 1))},
		{"question of the minor pass answered", agentLot, &Lot{Status: LotQuestion,
			Steps:     []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true), ok(StepFixMinors, 0)},
			Questions: []Question{{Step: 2, Text: "Which?", Answer: "That"}}}, goOn(atMinor(StepFixMinors, 0))},
		{"question pointing nowhere: by the steps", agentLot, &Lot{Status: LotQuestion, Steps: []Step{ok(StepImplement, 0)},
			Questions: []Question{{Step: 7, Text: "Which?", Answer: "That"}}}, goOn(at(StepTest, 0))},
		{"running: killed after implement", agentLot, &Lot{Status: LotRunning, Steps: []Step{ok(StepImplement, 0)}}, goOn(at(StepTest, 0))},

		// Every kind of stop of the last step: replayed whole.
		{"step interrupted", agentLot, &Lot{Status: LotQueued, Steps: []Step{ended(StepImplement, 0, StepInterrupted)}}, goOn(at(StepImplement, 0))},
		{"step failed", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ended(StepReview, 0, StepFailed)}}, goOn(at(StepReview, 0))},
		{"step timed out", agentLot, &Lot{Status: LotQueued, Steps: []Step{ended(StepImplement, 0, StepTimedOut)}}, goOn(at(StepImplement, 0))},
		{"quota, suspended", agentLot, &Lot{Status: LotSuspended, Steps: []Step{ended(StepImplement, 0, StepQuota)}}, goOn(at(StepImplement, 0))},
		{"step cut", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ended(StepReview, 0, StepCut)}}, goOn(at(StepReview, 0))},
		{"still marked running", agentLot, &Lot{Status: LotRunning, Steps: []Step{ended(StepFix, 1, StepRunning)}}, goOn(at(StepFix, 1))},
		{"red test gate is run again", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ended(StepTest, 0, StepFailed)}},
			goOn(at(StepTest, 0))},
		{"red test gate of the minor pass", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true),
			ok(StepFixMinors, 0), ended(StepTest, 0, StepFailed)}}, goOn(atMinor(StepTest, 0))},
		{"interrupted fix after a not conform re-review", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0),
			reviewed(StepReview, 0, true), ok(StepFixMinors, 0), reviewed(StepRecheck, 0, false), ended(StepFix, 1, StepInterrupted)}},
			goOn(at(StepFix, 1))},

		// A gate of two repositories (also) passed only when both did.
		{"both gates ok", twoGates, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ok(StepTest, 0), gateOf("web", ok(StepTest, 0))}},
			goOn(at(StepReview, 0))},
		{"killed after the own gate, before the neighbour's", twoGates, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ok(StepTest, 0)}},
			goOn(at(StepTest, 0))},
		{"own gate red, neighbour's ok", twoGates, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ended(StepTest, 0, StepFailed), gateOf("web", ok(StepTest, 0))}},
			goOn(at(StepTest, 0))},
		{"a gate replayed whole after a cut", twoGates, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ok(StepTest, 0), ok(StepTest, 0), gateOf("web", ok(StepTest, 0))}},
			goOn(at(StepReview, 0))},

		// After a step that ended ok: where Next goes.
		{"precheck said: work to do", precheck, &Lot{Status: LotQueued, Steps: []Step{ok(StepPrecheck, 0)}}, goOn(at(StepImplement, 0))},
		{"implement ok, no test gate", noGate, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0)}}, goOn(at(StepReview, 0))},
		{"test gate green", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ok(StepTest, 0)}}, goOn(at(StepReview, 0))},
		{"not conform: next fix pass", agentLot, &Lot{Status: LotQueued, Findings: majorFinding,
			Steps: []Step{ok(StepImplement, 0), ok(StepTest, 0), reviewed(StepReview, 0, false)}}, goOn(at(StepFix, 1))},
		{"no fix pass left: held", agentLot, &Lot{Status: LotRunning, Findings: majorFinding, Steps: []Step{ok(StepImplement, 0),
			reviewed(StepReview, 0, false), ok(StepFix, 1), reviewed(StepReview, 1, false), ok(StepFix, 2), reviewed(StepReview, 2, false)}},
			held(LotHandedBack, "review not conform after 2 fix pass(es)", "review not conform after 2 fix pass(es)")},
		{"no fix passes at all: held", noFixes, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, false)}},
			held(LotHandedBack, "review not conform after 0 fix pass(es)", "review not conform after 0 fix pass(es)")},
		{"conform: integrate", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true)}},
			goOn(at(StepIntegrate, 0))},
		{"conform with minors: the minor pass", agentLot, &Lot{Status: LotQueued, Findings: minorFinding,
			Steps: []Step{ok(StepImplement, 0), ok(StepTest, 0), reviewed(StepReview, 0, true)}}, goOn(atMinor(StepFixMinors, 0))},
		{"minors, small lot: integrate", smallLot, &Lot{Status: LotQueued, Findings: minorFinding,
			Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true)}}, goOn(at(StepIntegrate, 0))},
		{"minor pass done: its test gate", agentLot, &Lot{Status: LotQueued, Findings: minorFinding,
			Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true), ok(StepFixMinors, 0)}}, goOn(atMinor(StepTest, 0))},
		{"minor pass, no test gate: the re-review", noGate, &Lot{Status: LotQueued, Findings: minorFinding,
			Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true), ok(StepFixMinors, 0)}}, goOn(atMinor(StepRecheck, 0))},
		{"minor pass test green: the re-review", agentLot, &Lot{Status: LotQueued, Findings: minorFinding,
			Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true), ok(StepFixMinors, 0), ok(StepTest, 0)}},
			goOn(atMinor(StepRecheck, 0))},
		{"re-review with minors: integrate", agentLot, &Lot{Status: LotQueued, Findings: minorFinding,
			Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true), ok(StepFixMinors, 0), reviewed(StepRecheck, 0, true)}},
			goOn(at(StepIntegrate, 0))},
		{"re-review not conform: a full fix", agentLot, &Lot{Status: LotQueued, Findings: majorFinding,
			Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true), ok(StepFixMinors, 0), reviewed(StepRecheck, 0, false)}},
			goOn(at(StepFix, 1))},
		{"untrusted review (no verdict recorded)", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), ok(StepReview, 0)}},
			goOn(at(StepIntegrate, 0))},

		// Integration began.
		{"integrate interrupted", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true),
			ended(StepIntegrate, 0, StepInterrupted)}}, goOn(at(StepIntegrate, 0))},
		{"integration refused, then its test ok", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true),
			ended(StepIntegrate, 0, StepInterrupted), ok(StepTest, 0)}}, goOn(at(StepIntegrate, 0))},
		{"killed in the rebased test", agentLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true),
			ended(StepIntegrate, 0, StepRunning), ended(StepTest, 0, StepInterrupted)}}, goOn(at(StepIntegrate, 0))},
		{"integrated, end not recorded", agentLot, &Lot{Status: LotRunning, IntegratedSHA: "abc", Steps: []Step{ok(StepImplement, 0),
			reviewed(StepReview, 0, true), ok(StepIntegrate, 0)}}, goOn(at(StepIntegrate, 0))},

		{"integration waits (a dirty checkout of the base): integration only", agentLot, &Lot{Status: LotInterrupted,
			Cause: "integration waits: /src has main checked out with uncommitted changes", Steps: []Step{ok(StepImplement, 0),
				reviewed(StepReview, 0, true), ended(StepIntegrate, 0, StepFailed)}}, goOn(at(StepIntegrate, 0))},
		{"integration waits after the rebased test: integration only", commandLot, &Lot{Status: LotInterrupted,
			Steps: []Step{ok(StepRun, 0), ok(StepTest, 0), ended(StepIntegrate, 0, StepFailed), ok(StepTest, 0)}}, goOn(at(StepIntegrate, 0))},
		{"integration refused by the lot (conflict): held", agentLot, &Lot{Status: LotHandedBack, Cause: "rebase conflicts in a.go",
			Steps: []Step{ok(StepImplement, 0), reviewed(StepReview, 0, true), ended(StepIntegrate, 0, StepFailed)}},
			held(LotHandedBack, "handed-back: rebase conflicts in a.go", "")},

		// Interrupted lots (a signal, cadence's cancel, a machine error).
		{"interrupted before its first step (worktree not made)", agentLot, &Lot{Status: LotInterrupted,
			Cause: "cannot make the worktree of repo r: context canceled"}, start(at(StepImplement, 0))},
		{"interrupted command lot: the run is replayed", commandLot, &Lot{Status: LotInterrupted, Cause: "stopped by cadence",
			Steps: []Step{ended(StepRun, 0, StepInterrupted)}}, goOn(at(StepRun, 0))},
		{"interrupted review", agentLot, &Lot{Status: LotInterrupted, Cause: "no space left on device",
			Steps: []Step{ok(StepImplement, 0), ok(StepTest, 0), ended(StepReview, 0, StepInterrupted)}}, goOn(at(StepReview, 0))},

		// Command lots.
		{"command run interrupted", commandLot, &Lot{Status: LotQueued, Steps: []Step{ended(StepRun, 0, StepInterrupted)}}, goOn(at(StepRun, 0))},
		{"command run ok: its test gate", commandLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepRun, 0)}}, goOn(at(StepTest, 0))},
		{"command run ok, no test gate", cmdNoGate, &Lot{Status: LotQueued, Steps: []Step{ok(StepRun, 0)}}, goOn(at(StepIntegrate, 0))},
		{"command run ok, no repo", cmdNoRepo, &Lot{Status: LotQueued, Steps: []Step{ok(StepRun, 0)}}, goOn(at(StepIntegrate, 0))},
		{"command test interrupted", commandLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepRun, 0), ended(StepTest, 0, StepInterrupted)}},
			goOn(at(StepTest, 0))},
		{"command test green", commandLot, &Lot{Status: LotQueued, Steps: []Step{ok(StepRun, 0), ok(StepTest, 0)}}, goOn(at(StepIntegrate, 0))},
	} {
		got := Resume(c.f, c.lot)
		if got != c.want {
			t.Errorf("%s: Resume = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestIntegrated(t *testing.T) {
	done := &Lot{IntegratedSHA: "abc", Steps: []Step{ok(StepReview, 0), ok(StepIntegrate, 0)}}
	if !Integrated(done) {
		t.Error("integrated lot not seen")
	}
	for name, l := range map[string]*Lot{
		"nil":            nil,
		"no steps":       {IntegratedSHA: "abc"},
		"no sha":         {Steps: []Step{ok(StepIntegrate, 0)}},
		"interrupted":    {IntegratedSHA: "abc", Steps: []Step{ended(StepIntegrate, 0, StepInterrupted)}},
		"not integrated": {IntegratedSHA: "abc", Steps: []Step{ok(StepReview, 0)}},
	} {
		if Integrated(l) {
			t.Errorf("%s: seen integrated", name)
		}
	}
}

// TestRunAndResumeAgree runs lots through Next with scripted outcomes,
// recording the steps as the executor does, and checks after every step
// that a resume from the record goes on where the run went on.
func TestRunAndResumeAgree(t *testing.T) {
	for _, c := range []struct {
		name     string
		f        LotFacts
		outcomes []OutcomeKind
		want     LotStatus
	}{
		{"straight", agentLot, []OutcomeKind{OutcomeOK, OutcomeOK, OutcomeOK, OutcomeOK}, LotDone},
		{"precheck and minors", precheck, []OutcomeKind{OutcomeOK, OutcomeOK, OutcomeOK, OutcomeMinors, OutcomeOK, OutcomeOK, OutcomeOK, OutcomeOK}, LotDone},
		{"red, fix, not conform, fix", agentLot, []OutcomeKind{OutcomeOK, OutcomeRed, OutcomeOK, OutcomeOK, OutcomeNotConform, OutcomeOK, OutcomeOK, OutcomeOK, OutcomeOK}, LotDone},
		{"minor pass red", agentLot, []OutcomeKind{OutcomeOK, OutcomeOK, OutcomeMinors, OutcomeOK, OutcomeRed, OutcomeOK, OutcomeOK, OutcomeOK, OutcomeOK}, LotDone},
		{"re-review not conform", noGate, []OutcomeKind{OutcomeOK, OutcomeMinors, OutcomeOK, OutcomeNotConform, OutcomeOK, OutcomeOK, OutcomeOK}, LotDone},
		{"out of fix passes", noGate, []OutcomeKind{OutcomeOK, OutcomeNotConform, OutcomeOK, OutcomeNotConform, OutcomeOK, OutcomeNotConform}, LotHandedBack},
		{"command lot", commandLot, []OutcomeKind{OutcomeOK, OutcomeOK, OutcomeOK}, LotDone},
	} {
		l := &Lot{Status: LotRunning}
		pos := Start(c.f)
		if r := Resume(c.f, l); r.Kind != ResumeStart || r.At != pos {
			t.Fatalf("%s: fresh lot resumes at %+v, starts at %+v", c.name, r, pos)
		}
		var got LotStatus
		for i, k := range c.outcomes {
			s := Step{Kind: pos.Step, Pass: pos.Pass, Status: StepOK}
			if k == OutcomeRed {
				s.Status = StepFailed
			}
			if pos.Step == StepReview || pos.Step == StepRecheck {
				conform := k != OutcomeNotConform
				s.Conform = &conform
				switch k {
				case OutcomeNotConform:
					l.Findings = majorFinding
				case OutcomeMinors:
					l.Findings = minorFinding
				default:
					l.Findings = nil
				}
			}
			if pos.Step == StepIntegrate {
				l.IntegratedSHA = "abc"
			}
			l.Steps = append(l.Steps, s)
			tr := Next(c.f, pos, Outcome{Kind: k})
			if !tr.GoesOn() {
				if i != len(c.outcomes)-1 {
					t.Fatalf("%s: ended %s after %d of %d steps", c.name, tr.End, i+1, len(c.outcomes))
				}
				got = tr.End
				break
			}
			r := Resume(c.f, l)
			// A red test gate is recorded failed: resume runs it again,
			// whose red outcome leads where the run went.
			if k == OutcomeRed {
				if r.At != pos {
					t.Errorf("%s step %d: red test gate resumes at %+v, want it again", c.name, i, r.At)
				}
			} else if r.Kind != ResumeAt || r.At != *tr.At {
				t.Errorf("%s step %d (%s %s): resume at %+v, the run goes on at %+v", c.name, i, pos.Step, k, r, *tr.At)
			}
			pos = *tr.At
		}
		if got != c.want {
			t.Errorf("%s: ended %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSeverity(t *testing.T) {
	for _, s := range []Severity{SeverityBlocking, SeverityMajor, SeverityMinor} {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
	}
	if Severity("critical").Valid() || Severity("").Valid() {
		t.Error("unknown severity valid")
	}
	if !SeverityBlocking.Blocks() || !SeverityMajor.Blocks() || SeverityMinor.Blocks() {
		t.Error("Blocks")
	}
	for _, c := range []struct {
		fs             []Finding
		conform, minor bool
	}{
		{nil, true, false},
		{minorFinding, true, true},
		{majorFinding, false, false},
		{[]Finding{{Severity: SeverityBlocking}, {Severity: SeverityMinor}}, false, true},
	} {
		if Conform(c.fs) != c.conform || HasMinor(c.fs) != c.minor {
			t.Errorf("%+v: conform %v minor %v", c.fs, Conform(c.fs), HasMinor(c.fs))
		}
	}
	// The JSON keeps the plain strings.
	var f Finding
	if err := json.Unmarshal([]byte(`{"severity":"major","text":"x"}`), &f); err != nil || f.Severity != SeverityMajor {
		t.Errorf("decode: %+v %v", f, err)
	}
	if b, _ := json.Marshal(Finding{Severity: SeverityMinor, Text: "y"}); string(b) != `{"severity":"minor","text":"y"}` {
		t.Errorf("encode: %s", b)
	}
}
