package executor

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// position is where an agent lot's life cycle is. minor marks the steps
// of the pass on minor findings (fix-minors, its test gate, the re-review).
type position struct {
	step  state.StepKind
	pass  int
	minor bool
}

// agent runs an agent lot's life cycle from where it stands:
//
//	[precheck] → implement → test gate → review ─ conform ─→ [fix-minors → test gate → review-recheck] → integrate
//	                              ↑                  └ not conform → fix (fresh session) ┘ at most fix_passes
//
// A red test gate or a review that is not conform costs a fix pass; when
// none is left the lot is handed back with the open findings. A conform
// review with minor findings gets one pass on them (not for small lots),
// then a short re-review.
func (lr *lotRun) agent(ctx context.Context) (state.LotStatus, error) {
	lot := lr.n.lot
	pos := position{step: state.StepImplement}
	if lot.Precheck {
		pos.step = state.StepPrecheck
	}
	if ra := lr.n.plan.ResumeAt; ra != nil {
		pos = position{step: ra.Step, pass: ra.Pass, minor: ra.Step == state.StepFixMinors || ra.Step == state.StepRecheck || lr.afterMinors()}
	}
	if pos.step == state.StepTest || pos.step == state.StepIntegrate {
		lr.giveBackSession() // resumed past its sessions: the unit is not needed now
	}
	afterWrite := func(p position) position {
		next := state.StepReview
		if p.minor {
			next = state.StepRecheck
		}
		if lot.Repo.Test != "" {
			next = state.StepTest
		}
		return position{step: next, pass: p.pass, minor: p.minor}
	}
	review := func(p position) position {
		if p.minor {
			return position{step: state.StepRecheck, pass: p.pass, minor: true}
		}
		return position{step: state.StepReview, pass: p.pass}
	}
	for {
		switch pos.step {
		case state.StepPrecheck:
			out, st, err := lr.session(ctx, state.StepPrecheck, 0, lot.ReviewModel, true)
			if st != "" || err != nil {
				return st, err
			}
			if out.Report != nil && out.Report.AlreadyDone {
				return lr.end(ctx, state.LotHandedBack, "the precheck says the work is already done: "+out.Report.Evidence)
			}
			pos = position{step: state.StepImplement}
		case state.StepImplement, state.StepFix, state.StepFixMinors:
			if why := lr.writeBudgetLeft(); why != "" {
				return lr.end(ctx, state.LotHandedBack, why)
			}
			out, st, err := lr.session(ctx, pos.step, pos.pass, lot.Model, false)
			if st != "" || err != nil {
				return st, err
			}
			if out.Report != nil && len(out.Report.Questions) > 0 {
				return lr.question(ctx, out.Report.Questions)
			}
			if dirty, err := lr.dirtyAll(ctx); err != nil || len(dirty) > 0 {
				return lr.end(ctx, state.LotHandedBack, dirtyCause(pos.step, dirty, err))
			}
			pos = afterWrite(pos)
		case state.StepTest:
			ok, msg, err := lr.shell(ctx, state.StepTest, lot.Repo.Test, 0)
			if err != nil || ctx.Err() != nil {
				return lr.stopped(ctx, err)
			}
			if ok {
				pos = review(pos)
				continue
			}
			finding := state.Finding{Severity: "blocking", Text: "the test gate `" + lot.Repo.Test + "` failed: " + msg}
			if err := lr.setFindings([]state.Finding{finding}); err != nil {
				return "", err
			}
			if pos.pass >= lot.FixPasses {
				return lr.end(ctx, state.LotHandedBack, fmt.Sprintf("test gate still red after %d fix pass(es)", lot.FixPasses))
			}
			pos = position{step: state.StepFix, pass: pos.pass + 1}
		case state.StepReview, state.StepRecheck:
			heads := lr.headsAll(ctx)
			out, st, err := lr.session(ctx, pos.step, pos.pass, lot.ReviewModel, true)
			if st != "" || err != nil {
				return st, err
			}
			after := lr.headsAll(ctx)
			dirty, derr := lr.dirtyAll(ctx)
			if after != heads || derr != nil || len(dirty) > 0 {
				// Its verdict is not recorded: it is not trusted.
				if err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Steps[len(l.Steps)-1].Conform = nil }); err != nil {
					return "", err
				}
				return lr.end(ctx, state.LotHandedBack, "the review changed the worktree (HEAD or files), so its verdict is not trusted")
			}
			if out.Report == nil {
				return lr.end(ctx, state.LotFailed, "the review gave no report")
			}
			if err := lr.setFindings(out.Report.Findings); err != nil {
				return "", err
			}
			switch {
			case out.Report.Conform() && !pos.minor && !lot.Small && hasMinor(out.Report.Findings):
				pos = position{step: state.StepFixMinors, pass: pos.pass, minor: true}
			case out.Report.Conform():
				pos = position{step: state.StepIntegrate, pass: pos.pass}
			case pos.pass >= lot.FixPasses:
				return lr.end(ctx, state.LotHandedBack, fmt.Sprintf("review not conform after %d fix pass(es): %s", lot.FixPasses, summarize(out.Report.Findings)))
			default:
				pos = position{step: state.StepFix, pass: pos.pass + 1}
			}
		case state.StepIntegrate:
			return lr.integrate(ctx)
		default:
			return lr.end(ctx, state.LotFailed, "cannot resume at step "+string(pos.step))
		}
	}
}

func hasMinor(fs []state.Finding) bool {
	for _, f := range fs {
		if f.Severity == "minor" {
			return true
		}
	}
	return false
}

// afterMinors reports whether the lot's last write step was its pass on
// minor findings (so a resumed test gate leads to the re-review).
func (lr *lotRun) afterMinors() bool {
	minor := false
	lr.r.o.Store.View(func(st *state.State) {
		for _, s := range st.Lots[lr.id].Steps {
			switch s.Kind {
			case state.StepFixMinors:
				minor = true
			case state.StepImplement, state.StepFix:
				minor = false
			}
		}
	})
	return minor
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
			if s.Kind == state.StepReview || s.Kind == state.StepRecheck {
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
	if len(dirty) > 10 {
		dirty = append(dirty[:10:10], fmt.Sprintf("and %d more", len(dirty)-10))
	}
	return fmt.Sprintf("the %s session left uncommitted changes (cadence never commits or discards an agent's work): %s", step, strings.Join(dirty, ", "))
}

func summarize(fs []state.Finding) string {
	var parts []string
	for _, f := range fs {
		if f.Severity == "blocking" || f.Severity == "major" {
			parts = append(parts, f.Severity+": "+f.Text)
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

// question stops the lot on the agent's questions.
func (lr *lotRun) question(ctx context.Context, qs []string) (state.LotStatus, error) {
	err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		for _, q := range qs {
			l.Questions = append(l.Questions, state.Question{Step: len(l.Steps) - 1, Text: q})
		}
	})
	if err != nil {
		return "", err
	}
	return lr.end(ctx, state.LotQuestion, strings.Join(qs, " / "))
}

// uncited returns a warning for each commit whose message does not cite the
// lot id.
func uncited(commits []string, id string) []string {
	var w []string
	for _, c := range commits {
		if !strings.Contains(c, id) {
			w = append(w, "commit does not cite the lot id: "+c)
		}
	}
	return w
}

// brief renders the prompt of a step from the lot and its state.
func (lr *lotRun) brief(ctx context.Context, kind state.StepKind, pass int) (string, briefs.Data, error) {
	lot := lr.n.lot
	d := briefs.Data{Wave: lr.r.o.Config.Wave.Name, Lot: lot.ID, Title: lot.Title, Brief: lot.Brief,
		Repo: lot.Repo.Name, Base: lot.Repo.Base, Test: lot.Repo.Test, Step: kind, Pass: pass}
	var base string
	lr.r.o.Store.View(func(st *state.State) {
		l := st.Lots[lr.id]
		base = l.BaseSHA
		d.Findings = append(d.Findings, l.Findings...)
		for _, q := range l.Questions {
			if q.Answer != "" {
				d.Answers = append(d.Answers, q)
			}
		}
	})
	if head, err := lr.r.o.Git.Head(ctx, lr.dir); err == nil && base != "" && head != base {
		d.Commits, _ = lr.r.o.Git.Commits(ctx, lr.dir, base, head)
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
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
