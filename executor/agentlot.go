package executor

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/executor/state"
)

// position is where an agent lot's life cycle is.
type position struct {
	step state.StepKind
	pass int
}

// agent runs an agent lot's life cycle from where it stands:
// implement → test gate → review → (fix → test gate → review)* → integrate.
// A red test gate or a review that is not conform costs a fix pass; when
// none is left the lot is handed back with the open findings.
func (lr *lotRun) agent(ctx context.Context) (state.LotStatus, error) {
	lot := lr.n.lot
	pos := position{step: state.StepImplement}
	if ra := lr.n.plan.ResumeAt; ra != nil {
		pos = position{ra.Step, ra.Pass}
	}
	if pos.step == state.StepTest || pos.step == state.StepIntegrate {
		lr.giveBackSession() // resumed past its sessions: the unit is not needed now
	}
	afterWrite := func(pass int) position {
		if lot.Repo.Test != "" {
			return position{state.StepTest, pass}
		}
		return position{state.StepReview, pass}
	}
	for {
		switch pos.step {
		case state.StepImplement, state.StepFix, state.StepPrecheck:
			if pos.step == state.StepPrecheck {
				pos.step = state.StepImplement // the precheck step comes with the full life cycle
			}
			if lot.Budget > 0 && lr.spent() >= int64(lot.Budget) {
				return lr.end(ctx, state.LotHandedBack, fmt.Sprintf("lot budget of %s reached before %s", lot.Budget, pos.step))
			}
			out, st, err := lr.session(ctx, pos.step, pos.pass, lot.Model, false)
			if st != "" || err != nil {
				return st, err
			}
			if out.Report != nil && len(out.Report.Questions) > 0 {
				return lr.question(ctx, out.Report.Questions)
			}
			if dirty, err := lr.r.o.Git.Dirty(ctx, lr.dir); err != nil || len(dirty) > 0 {
				return lr.end(ctx, state.LotHandedBack, dirtyCause(pos.step, dirty, err))
			}
			pos = afterWrite(pos.pass)
		case state.StepTest:
			ok, msg, err := lr.shell(ctx, state.StepTest, lot.Repo.Test, 0)
			if err != nil || ctx.Err() != nil {
				return lr.stopped(ctx, err)
			}
			if ok {
				pos = position{state.StepReview, pos.pass}
				continue
			}
			finding := state.Finding{Severity: "blocking", Text: "the test gate `" + lot.Repo.Test + "` failed: " + msg}
			if err := lr.setFindings([]state.Finding{finding}); err != nil {
				return "", err
			}
			if pos.pass >= lot.FixPasses {
				return lr.end(ctx, state.LotHandedBack, fmt.Sprintf("test gate still red after %d fix pass(es)", lot.FixPasses))
			}
			pos = position{state.StepFix, pos.pass + 1}
		case state.StepReview, state.StepRecheck:
			head, _ := lr.r.o.Git.Head(ctx, lr.dir)
			out, st, err := lr.session(ctx, state.StepReview, pos.pass, lot.ReviewModel, true)
			if st != "" || err != nil {
				return st, err
			}
			after, _ := lr.r.o.Git.Head(ctx, lr.dir)
			dirty, derr := lr.r.o.Git.Dirty(ctx, lr.dir)
			if after != head || derr != nil || len(dirty) > 0 {
				return lr.end(ctx, state.LotHandedBack, "the review changed the worktree (HEAD or files), so its verdict is not trusted")
			}
			if out.Report == nil {
				return lr.end(ctx, state.LotFailed, "the review gave no report")
			}
			if err := lr.setFindings(out.Report.Findings); err != nil {
				return "", err
			}
			if out.Report.Conform() {
				pos = position{state.StepIntegrate, pos.pass}
				continue
			}
			if pos.pass >= lot.FixPasses {
				return lr.end(ctx, state.LotHandedBack, fmt.Sprintf("review not conform after %d fix pass(es): %s", lot.FixPasses, summarize(out.Report.Findings)))
			}
			pos = position{state.StepFix, pos.pass + 1}
		case state.StepIntegrate:
			return lr.integrate(ctx)
		default:
			return lr.end(ctx, state.LotFailed, "cannot resume at step "+string(pos.step))
		}
	}
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

// spent is what the lot has spent so far, in counted tokens.
func (lr *lotRun) spent() int64 {
	var n int64
	lr.r.o.Store.View(func(st *state.State) {
		if l := st.Lots[lr.id]; l != nil {
			n = l.Usage().Counted()
		}
	})
	return n
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

// session runs one agent session as a step. When the lot must stop (the
// session was interrupted, failed, hit a limit, or the budget is spent), it
// returns the lot's status; otherwise the outcome, with an empty status.
func (lr *lotRun) session(ctx context.Context, kind state.StepKind, pass int, model string, readOnly bool) (Outcome, state.LotStatus, error) {
	r := lr.r
	if r.budget.exhausted() || r.budget.stopped() {
		lr.giveBackSession()
		st, err := lr.end(ctx, state.LotSuspended, "the wave's budget is spent")
		return Outcome{}, st, err
	}
	if lr.n.heldSession {
		lr.n.heldSession = false
	} else if err := r.sessions.Acquire(ctx, lr.n); err != nil {
		st, err := lr.stopped(ctx, nil)
		return Outcome{}, st, err
	}
	defer r.sessions.Release()
	if r.o.Slots != nil {
		release, err := r.o.Slots.Acquire(ctx, lr.id, kind)
		if err != nil {
			st, err := lr.stopped(ctx, nil)
			return Outcome{}, st, err
		}
		defer release()
	}
	brief, data, err := lr.brief(ctx, kind, pass)
	if err != nil {
		st, err := lr.end(ctx, state.LotFailed, err.Error())
		return Outcome{}, st, err
	}
	head, _ := r.o.Git.Head(ctx, lr.dir)
	i, err := lr.beginStep(kind, pass, model)
	if err != nil {
		return Outcome{}, "", err
	}
	sess := Session{
		Wave: r.o.Config.Wave.Name, Lot: lr.id, Step: kind, Pass: pass, Agent: lr.n.lot.Agent, Model: model,
		Dir: lr.dir, Brief: brief, ReadOnly: readOnly, SessionID: newUUID(), LogPrefix: lr.logPath(i, kind, ""),
		Timeout: lr.n.lot.Timeout, AddDirs: data.AlsoDirs,
	}
	if readOnly {
		sess.Timeout = lr.n.lot.ReviewTimeout
	}
	var pidErr error
	sess.Started = func(pid int) {
		pidErr = r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
			l.Steps[i].PID, l.Steps[i].SessionID, l.Steps[i].HeadBefore = pid, sess.SessionID, head
		})
	}
	sess.Progress = func(u state.Usage) {
		r.emit(Event{Kind: EvProgress, Lot: lr.id, Step: kind, Pass: pass, Model: model, Usage: u})
	}
	out := r.o.Agent.Run(ctx, sess)
	if pidErr != nil {
		return out, "", pidErr
	}
	counted, micros, cacheRead := r.budget.add(out.Usage, out.CostMicros)
	if err := r.o.Store.UpdateWave(func(st *state.State) {
		st.Consumed = state.Consumed{Counted: counted, CostMicros: micros, CacheRead: cacheRead}
	}); err != nil {
		return out, "", err
	}
	after, _ := r.o.Git.Head(ctx, lr.dir)
	var commits []string
	if !readOnly && after != head && head != "" {
		commits, _ = r.o.Git.Commits(ctx, lr.dir, head, after)
	}
	status := out.Status
	if ctx.Err() != nil && status != state.StepOK {
		status = state.StepInterrupted
	}
	if err := lr.endStep(i, status, out.Cause, func(s *state.Step) {
		s.Usage, s.CostMicros, s.HeadAfter, s.Commits, s.Report = out.Usage, out.CostMicros, after, commits, sess.LogPrefix+".json"
		if kind == state.StepReview && out.Report != nil {
			c := out.Report.Conform()
			s.Conform = &c
		}
	}); err != nil {
		return out, "", err
	}
	if w := uncited(commits, lr.id); len(w) > 0 {
		if err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Warnings = append(l.Warnings, w...) }); err != nil {
			return out, "", err
		}
	}
	switch status {
	case state.StepOK:
		return out, "", nil
	case state.StepInterrupted:
		st, err := lr.stopped(ctx, nil)
		return out, st, err
	case state.StepQuota:
		r.budget.quota(out.ResetAt)
		st, err := lr.end(ctx, state.LotSuspended, "usage limit: "+out.Cause)
		return out, st, err
	default:
		st, err := lr.end(ctx, state.LotFailed, fmt.Sprintf("%s session %s: %s", kind, status, out.Cause))
		return out, st, err
	}
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

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
