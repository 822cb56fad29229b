package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/ids"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// run runs the lot's life cycle (state.Next, docs/running.md) from where the
// state left it (state.Resume, §6): it asks the life cycle for the next
// position, runs that step, turns its result into a typed outcome, and asks
// again, until the life cycle ends the lot's run.
func (lr *lotRun) run(ctx context.Context) (state.LotStatus, error) {
	from := lr.from
	if from.Kind != state.ResumeStart && from.Kind != state.ResumeAt {
		// The plan runs no done, held or waiting lot; should one come, it
		// ends as the life cycle says.
		return lr.end(ctx, from.Status, from.Cause)
	}
	pos := from.At
	if pos.Step == state.StepTest || pos.Step == state.StepIntegrate {
		lr.giveBackSession() // resumed past its sessions: the unit is not needed now
	}
	for {
		if st, stop, err := lr.beforeStep(pos.Step); stop {
			return st, err
		}
		at, o, err := lr.step(ctx, pos)
		if err != nil {
			return "", err
		}
		t := state.Next(lr.facts, at, o)
		if !t.GoesOn() {
			return lr.finish(ctx, t)
		}
		pos = *t.At
	}
}

// step runs the step at pos and returns its outcome, with the position the
// outcome belongs to (pos, or the fix session that integration ran on a
// conflict). Only a failure to record state is an error.
func (lr *lotRun) step(ctx context.Context, pos state.Position) (state.Position, state.Outcome, error) {
	var o state.Outcome
	var err error
	// What runs a step is the step-kind table's: the merge queue, a
	// command (the repository's test gate, or the lot's own run), or a
	// session that writes, records a verdict, or answers a precheck.
	info, known := state.Info(pos.Step)
	switch {
	case !known:
		o = state.Outcome{Kind: state.OutcomeNoStart, Detail: "cannot resume at step " + string(pos.Step)}
	case info.Runs == state.RunsQueue:
		return lr.integrate(ctx, pos)
	case info.Runs == state.RunsCommand && info.Timeout == state.TimeoutTest:
		o, err = lr.testGate(ctx, pos)
	case info.Runs == state.RunsCommand:
		o, err = lr.runCommand(ctx)
	case info.Writes:
		o, err = lr.write(ctx, pos)
	case info.Browser:
		o, err = lr.uxReview(ctx, pos)
	case info.RecordsVerdict:
		o, err = lr.review(ctx, pos)
	case info.ReadOnly:
		o, err = lr.precheck(ctx)
	default:
		o = state.Outcome{Kind: state.OutcomeNoStart, Detail: "no way to run step " + string(pos.Step)}
	}
	if o.Kind == state.OutcomeNoStart && (ctx.Err() != nil || machineText(o.Detail)) {
		// A step that could not be set up because of cadence's cancel or
		// the machine (no log folder on a full disk) is interrupted, not
		// failed.
		o = interruptedOutcome(o.Detail)
	}
	if o.Kind == state.OutcomeInterrupted && o.Detail == "" {
		o.Detail = "stopped by cadence"
	}
	return pos, o, err
}

// okOutcome is the outcome of a step that did its job.
var okOutcome = state.Outcome{Kind: state.OutcomeOK}

// stopOutcome is the outcome of a command step that cadence's shutdown or a
// machine error interrupted (an *interruptedErr), or that ended on an
// incident (an *incidentErr: failed), or the error when the step could not
// be recorded.
func stopOutcome(ctx context.Context, err error) (state.Outcome, error) {
	if o, ok := incidentOutcome(err); ok {
		return o, nil
	}
	var ie *interruptedErr
	switch {
	case errors.As(err, &ie):
		return interruptedOutcome(ie.Cause), nil
	case err != nil && ctx.Err() == nil:
		return state.Outcome{}, err
	}
	return interruptedOutcome("stopped by cadence"), nil
}

// precheck runs the read-only precheck: does the work still need doing?
func (lr *lotRun) precheck(ctx context.Context) (state.Outcome, error) {
	out, o, err := lr.readOnlySession(ctx, state.StepPrecheck, 0)
	if o.Kind != state.OutcomeOK || err != nil {
		return o, err
	}
	if out.Report != nil && out.Report.AlreadyDone {
		return state.Outcome{Kind: state.OutcomeAlreadyDone, Detail: out.Report.Evidence}, nil
	}
	return okOutcome, nil
}

// write runs a write step (implement, fix, fix-minors) under the lot's
// budget; it records the questions the agent asked, checks that it left
// clean trees, and checks its report's status and its commits (reports.go).
func (lr *lotRun) write(ctx context.Context, pos state.Position) (state.Outcome, error) {
	if why := lr.writeBudgetLeft(); why != "" {
		return state.Outcome{Kind: state.OutcomeLotBudget, Detail: why}, nil
	}
	out, o, err := lr.session(ctx, pos.Step, pos.Pass, false)
	if o.Kind != state.OutcomeOK || err != nil {
		return o, err
	}
	// The report is checked against itself and against git (reports.go).
	if qs, err := lr.reportQuestions(pos.Step, out.Report); err != nil || len(qs) > 0 {
		if err != nil {
			return state.Outcome{}, err
		}
		return lr.question(qs)
	}
	if dirty, err := lr.dirtyAll(ctx); err != nil || len(dirty) > 0 {
		return state.Outcome{Kind: state.OutcomeDirty, Detail: dirtyCause(pos.Step, dirty, err)}, nil
	}
	if o, stop := unfinished(pos.Step, out.Report); stop {
		return o, nil
	}
	if o, stop, err := lr.checkCommits(ctx, pos.Step, out.Report); stop || err != nil {
		return o, err
	}
	return okOutcome, nil
}

// testGate runs the test command of each of the lot's repositories in that
// repository's worktree: the own repository first, then the neighbours
// (also) in the wave file's order. Every gate runs; each red one of an
// agent lot becomes a blocking finding naming its repository, for the fix
// pass, and the outcome is red (naming the first red neighbour when the
// own gate is green).
func (lr *lotRun) testGate(ctx context.Context, pos state.Position) (state.Outcome, error) {
	if !lr.facts.TestGate {
		return okOutcome, nil // resumed at a test gate the wave file no longer has
	}
	var findings []state.Finding
	red := okOutcome
	for _, rp := range lr.n.lot.Repos() {
		if rp.Test == "" {
			continue
		}
		name := lr.repoLabel(rp)
		if lr.gateInQueue(ctx, rp) {
			lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: state.StepTest, Message: fmt.Sprintf("test gate of repo %s: run by the merge queue on the rebased tree (the base moves before this lot integrates)", rp.Name)})
			continue
		}
		if rp == lr.n.lot.Repo {
			lr.comingUp()
		}
		began, tree := time.Now(), lr.treeOf(ctx, rp)
		green, msg, err := lr.shellIn(ctx, state.StepTest, pos.Pass, rp.Test, rp.TestTimeout, lr.dirs[rp], name, false)
		if err == nil && ctx.Err() == nil {
			lr.r.queue().NoteGate(rp, time.Since(began))
			if green && tree != "" {
				err = lr.recordGate(rp, tree, true, []string{lr.id})
			}
		}
		if err != nil || ctx.Err() != nil {
			return stopOutcome(ctx, err)
		}
		if green {
			continue
		}
		text := "the test gate `" + rp.Test + "` failed: " + msg
		if name != "" {
			text = fmt.Sprintf("the test gate `%s` of the neighbour repository %s (run in its worktree %s) failed: %s", rp.Test, name, lr.dirs[rp], msg)
		}
		findings = append(findings, state.Finding{Severity: state.SeverityBlocking, Text: text})
		if red.Kind == state.OutcomeOK {
			red = state.Outcome{Kind: state.OutcomeRed, Detail: msg, Repo: name}
		}
	}
	if red.Kind == state.OutcomeOK {
		return okOutcome, nil
	}
	if !lr.facts.Command {
		if err := lr.setFindings(findings); err != nil {
			return state.Outcome{}, err
		}
	}
	return red, nil
}

// review runs a read-only review (or the re-review after the minor pass),
// checks that it left the worktrees as they were, and records its findings.
func (lr *lotRun) review(ctx context.Context, pos state.Position) (state.Outcome, error) {
	out, o, err := lr.readOnlySession(ctx, pos.Step, pos.Pass)
	if o.Kind != state.OutcomeOK || err != nil {
		return o, err
	}
	if out.Report == nil {
		return state.Outcome{Kind: state.OutcomeNoReport}, nil
	}
	// A visible lot's minor UX findings join the review's, for its
	// minor pass (ux.go).
	fs := slices.Concat(out.Report.Findings, lr.uxMinors())
	if err := lr.setFindings(fs); err != nil {
		return state.Outcome{}, err
	}
	switch {
	case !state.Conform(fs):
		return state.Outcome{Kind: state.OutcomeNotConform, Detail: summarize(fs)}, nil
	case state.HasMinor(fs):
		return state.Outcome{Kind: state.OutcomeMinors}, nil
	}
	return okOutcome, nil
}

// finish records the end of the lot's run that a transition says:
// interrupted (to resume, with the cause) or its status and cause.
func (lr *lotRun) finish(ctx context.Context, t state.Transition) (state.LotStatus, error) {
	if t.End == state.LotInterrupted {
		return lr.interrupted(t.Cause)
	}
	return lr.end(ctx, t.End, t.Cause)
}

// writeBudgetLeft says why no write pass may start under the lot's budget
// ("" when one may): what the lot spent, plus a reserve for the review that
// must follow (the most a review of this lot has cost, or a tenth of the
// budget before the first review), must stay within the budget.
func (lr *lotRun) writeBudgetLeft() string {
	budget := int64(lr.n.lot.Budget)
	if budget <= 0 {
		return ""
	}
	var spent, reserve int64
	lr.r.o.Store.View(func(st *state.State) {
		l := st.Lots[lr.id]
		spent = l.Usage().Counted()
		for _, s := range l.Steps {
			if info, _ := state.Info(s.Kind); info.RecordsVerdict {
				reserve = max(reserve, s.Usage.Counted())
			}
		}
	})
	if reserve == 0 {
		reserve = budget / 10
	}
	if spent+reserve > budget {
		return fmt.Sprintf("the lot's budget of %s is spent (%s, and %s kept for the review after a write pass)",
			spec.Tokens(budget), spec.Tokens(spent), spec.Tokens(reserve))
	}
	return ""
}

func dirtyCause(step state.StepKind, dirty []string, err error) string {
	if err != nil {
		return "cannot read the worktree's status: " + err.Error()
	}
	dirty = limit(dirty, 10)
	return fmt.Sprintf("the %s session left uncommitted changes (cadence never commits or discards an agent's work): %s", step, strings.Join(dirty, ", "))
}

func summarize(fs []state.Finding) string {
	var parts []string
	for _, f := range fs {
		if f.Severity.Blocks() {
			parts = append(parts, string(f.Severity)+": "+f.Text)
		}
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more", len(parts)-3))
	}
	return strings.Join(parts, "; ")
}

// giveBackSession releases the session unit the dispatcher took for the lot
// when the lot ends or pauses before using it.
func (lr *lotRun) giveBackSession() {
	if lr.n.heldSession {
		lr.n.heldSession = false
		lr.r.sessions.Release()
	}
}

func (lr *lotRun) setFindings(fs []state.Finding) error {
	return lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Findings = fs })
}

// question records the agent's questions on the last step; the outcome
// stops the lot until they are answered.
func (lr *lotRun) question(qs []string) (state.Outcome, error) {
	err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		for _, q := range qs {
			l.Questions = append(l.Questions, state.Question{Step: len(l.Steps) - 1, Text: q})
		}
	})
	if err != nil {
		return state.Outcome{}, err
	}
	return state.Outcome{Kind: state.OutcomeQuestions, Detail: strings.Join(qs, " / ")}, nil
}

// brief renders the prompt of a step from the lot and its state.
func (lr *lotRun) brief(ctx context.Context, kind state.StepKind, pass int) (string, briefs.Data, error) {
	lot := lr.n.lot
	d := briefs.Data{Wave: lr.r.o.Config.Wave.Name, Lot: lot.ID, Title: lot.Title, Brief: lot.Brief,
		Repo: lot.Repo.Name, Base: lot.Repo.Base, Test: lot.Repo.Test, Step: kind, Pass: pass}
	if lot.UX != nil {
		d.URL, d.Paths = lot.UX.URL, lot.UX.Paths
	}
	var base string
	lr.r.o.Store.View(func(st *state.State) {
		l := st.Lots[lr.id]
		base = l.BaseSHA
		d.AgentConfig = append(d.AgentConfig, l.AgentConfig...)
		d.Findings = append(d.Findings, l.Findings...)
		d.UXFindings = append(d.UXFindings, l.UXFindings...)
		for _, q := range l.Questions {
			if q.Answer != "" {
				d.Answers = append(d.Answers, q)
			}
		}
	})
	// The lot's commits so far, in its own repository and each neighbour's
	// (from where its branch there started), one look.
	from := map[string]string{lot.Repo.Name: base}
	for _, rp := range lot.Also {
		from[rp.Name] = lr.bases[rp]
	}
	looked := lr.look(ctx, step.LookRequest{From: from, Commits: true}, false)
	d.Commits = looked[lot.Repo.Name].Commits
	d.Neighbours = lr.neighbours(looked)
	for _, nb := range d.Neighbours {
		d.AlsoDirs = append(d.AlsoDirs, nb.Dir)
	}
	if lr.r.o.Briefs == nil {
		return "", d, fmt.Errorf("no brief templates")
	}
	s, err := lr.r.o.Briefs.Render(kind, d)
	return s, d, err
}

// NewSessionID returns a fresh session id (a random version 4 UUID).
func NewSessionID() string { return newUUID() }

// newUUID returns a random (version 4) UUID.
func newUUID() string { return ids.UUID() }
