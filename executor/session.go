package executor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// session runs one agent session as a step. When the lot must stop (the
// session was interrupted, failed, hit a limit, or the budget is spent), it
// returns the lot's status; otherwise the outcome, with an empty status.
// With on_quota = "wait", a session that hits a usage limit makes every new
// session wait for the reset, then this step runs again in a fresh session.
func (lr *lotRun) session(ctx context.Context, kind state.StepKind, pass int, model string, readOnly bool) (Outcome, state.LotStatus, error) {
	for {
		out, st, err, retry := lr.sessionOnce(ctx, kind, pass, model, readOnly)
		if !retry {
			return out, st, err
		}
	}
}

func (lr *lotRun) sessionOnce(ctx context.Context, kind state.StepKind, pass int, model string, readOnly bool) (Outcome, state.LotStatus, error, bool) {
	r := lr.r
	if err := r.budget.waitQuota(ctx, func(until time.Time) {
		r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: "usage limit: no session starts before " + until.Local().Format(time.TimeOnly)})
	}); err != nil {
		lr.giveBackSession()
		st, err := lr.stopped(ctx, nil)
		return Outcome{}, st, err, false
	}
	if r.budget.exhausted() || r.budget.stopped() {
		lr.giveBackSession()
		st, err := lr.end(ctx, state.LotSuspended, "the wave's budget is spent")
		return Outcome{}, st, err, false
	}
	if lr.n.heldSession {
		lr.n.heldSession = false
	} else if err := r.sessions.Acquire(ctx, lr.n); err != nil {
		st, err := lr.stopped(ctx, nil)
		return Outcome{}, st, err, false
	}
	defer r.sessions.Release()
	if r.o.Slots != nil {
		release, err := r.o.Slots.Acquire(ctx, lr.id, kind)
		if err != nil {
			st, err := lr.stopped(ctx, nil)
			return Outcome{}, st, err, false
		}
		defer release()
	}
	brief, data, err := lr.brief(ctx, kind, pass)
	if err != nil {
		st, err := lr.end(ctx, state.LotFailed, err.Error())
		return Outcome{}, st, err, false
	}
	head, _ := r.o.Git.Head(ctx, lr.dir)
	if err := lr.ensureLogDir(); err != nil {
		st, err := lr.end(ctx, state.LotFailed, "cannot make the log folder: "+err.Error())
		return Outcome{}, st, err, false
	}
	i, err := lr.beginStep(kind, pass, model)
	if err != nil {
		return Outcome{}, "", err, false
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
	sess.Moved = lr.movement(ctx)
	sess.Env = lr.guardEnv
	remotes := lr.remoteStates(ctx)
	sess.Note = func(msg string) { r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: msg}) }
	out := r.o.Agent.Run(ctx, sess)
	if pidErr != nil {
		return out, "", pidErr, false
	}
	if pushed := lr.pushedTo(ctx, remotes); pushed != "" {
		out.Status, out.Cause = state.StepFailed, "a push happened during the session: the remotes of repo "+pushed+" changed"
		r.incident("lot " + lr.id + ": " + out.Cause)
	}
	counted, micros, cacheRead := r.budget.add(out.Usage, out.CostMicros)
	if err := r.o.Store.UpdateWave(func(st *state.State) {
		st.Consumed = state.Consumed{Counted: counted, CostMicros: micros, CacheRead: cacheRead}
	}); err != nil {
		return out, "", err, false
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
		if (kind == state.StepReview || kind == state.StepRecheck) && out.Report != nil {
			c := out.Report.Conform()
			s.Conform = &c
		}
	}); err != nil {
		return out, "", err, false
	}
	w := uncited(commits, lr.id)
	for _, c := range out.PushAttempts {
		w = append(w, "the session ran a push command: "+c)
		r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: "push attempt: " + c})
	}
	if len(w) > 0 {
		if err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Warnings = append(l.Warnings, w...) }); err != nil {
			return out, "", err, false
		}
	}
	switch status {
	case state.StepOK:
		return out, "", nil, false
	case state.StepInterrupted:
		st, err := lr.stopped(ctx, nil)
		return out, st, err, false
	case state.StepQuota:
		if r.o.Config.Wave.OnQuota == spec.OnQuotaWait {
			r.budget.pauseUntil(out.ResetAt, r.now())
			return out, "", nil, true
		}
		r.budget.quota(out.ResetAt)
		st, err := lr.end(ctx, state.LotSuspended, "usage limit: "+out.Cause)
		return out, st, err, false
	default:
		st, err := lr.end(ctx, state.LotFailed, fmt.Sprintf("%s session %s: %s", kind, status, out.Cause))
		return out, st, err, false
	}
}

// remoteStates records what the remotes of the lot's repositories hold.
func (lr *lotRun) remoteStates(ctx context.Context) map[*spec.Repo]string {
	m := map[*spec.Repo]string{}
	for _, rp := range lr.n.lot.Repos() {
		m[rp] = lr.r.o.Git.RemoteState(ctx, rp)
	}
	return m
}

// pushedTo names a repository whose remotes changed since before, or "".
func (lr *lotRun) pushedTo(ctx context.Context, before map[*spec.Repo]string) string {
	for _, rp := range lr.n.lot.Repos() {
		if lr.r.o.Git.RemoteState(ctx, rp) != before[rp] {
			return rp.Name
		}
	}
	return ""
}

// fixConflict runs one fix session to resolve an integration conflict on
// the lot's branch (on_conflict = "fix"); the caller integrates again, once.
// It returns a status only when the lot must stop.
func (lr *lotRun) fixConflict(ctx context.Context, rp *spec.Repo, files []string) (state.LotStatus, error) {
	lr.conflictFixed = true
	finding := state.Finding{Severity: "blocking", Text: fmt.Sprintf(
		"integration: the branch conflicts with %s of repo %s in %s. Rebase the branch onto %s (git rebase %s), resolve every conflict keeping both sides' intent, and finish the rebase; leave a clean tree.",
		rp.Base, rp.Name, strings.Join(files, ", "), rp.Base, rp.Base)}
	if err := lr.setFindings([]state.Finding{finding}); err != nil {
		return "", err
	}
	pass := 1
	lr.r.o.Store.View(func(st *state.State) {
		for _, s := range st.Lots[lr.id].Steps {
			pass = max(pass, s.Pass+1)
		}
	})
	if _, st, err := lr.session(ctx, state.StepFix, pass, lr.n.lot.Model, false); st != "" || err != nil {
		return st, err
	}
	if dirty, err := lr.dirtyAll(ctx); err != nil || len(dirty) > 0 {
		return lr.end(ctx, state.LotHandedBack, dirtyCause(state.StepFix, dirty, err))
	}
	return "", nil
}

// dirtyAll lists the uncommitted changes of all the lot's worktrees; a
// neighbour's are named repo:path.
func (lr *lotRun) dirtyAll(ctx context.Context) ([]string, error) {
	var all []string
	for _, rp := range lr.n.lot.Repos() {
		d, err := lr.r.o.Git.Dirty(ctx, lr.dirs[rp])
		if err != nil {
			return nil, err
		}
		for _, f := range d {
			if rp != lr.n.lot.Repo {
				f = rp.Name + ":" + f
			}
			all = append(all, f)
		}
	}
	return all, nil
}

// headsAll is the HEADs of all the lot's worktrees, as one string.
func (lr *lotRun) headsAll(ctx context.Context) string {
	var b strings.Builder
	for _, rp := range lr.n.lot.Repos() {
		h, _ := lr.r.o.Git.Head(ctx, lr.dirs[rp])
		b.WriteString(h + "\n")
	}
	return b.String()
}

// movement returns a Moved func for a write step: whether the HEAD or the
// uncommitted files of any of the lot's worktrees changed since the last call.
func (lr *lotRun) movement(ctx context.Context) func() bool {
	last := lr.headsAll(ctx)
	dirty, _ := lr.dirtyAll(ctx)
	lastDirty := strings.Join(dirty, "\x00")
	return func() bool {
		h := lr.headsAll(ctx)
		d, _ := lr.dirtyAll(ctx)
		now := strings.Join(d, "\x00")
		moved := h != last || now != lastDirty
		last, lastDirty = h, now
		return moved
	}
}
