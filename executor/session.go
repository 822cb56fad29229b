package executor

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// session runs one agent session as a step and returns what the agent
// said with the step's outcome for the life cycle: ok when the session
// succeeded (its report is the caller's to judge), else why it stopped
// (interrupted, failed, timed out, cut, usage limit, the wave's budget
// spent, no brief). Only a failure to record state is an error.
// With on_quota = "wait", a session that hits a usage limit makes every new
// session wait for the reset, then this step runs again in a fresh session.
// A session that ends on an API failure is retried, or pauses the lot
// (apifail.go).
func (lr *lotRun) session(ctx context.Context, kind state.StepKind, pass int, model string, readOnly bool) (Outcome, state.Outcome, error) {
	tries := apiTries{start: lr.r.now()}
	for {
		out, o, err, retry := lr.sessionOnce(ctx, kind, pass, model, readOnly, &tries)
		if !retry {
			return out, o, err
		}
		if tries.wait > 0 && !lr.waitRetry(ctx, &tries) {
			return out, interrupted, nil
		}
	}
}

var interrupted = state.Outcome{Kind: state.OutcomeInterrupted}

func (lr *lotRun) sessionOnce(ctx context.Context, kind state.StepKind, pass int, model string, readOnly bool, tries *apiTries) (Outcome, state.Outcome, error, bool) {
	r := lr.r
	// The waits end early on the lead's drop or stop (steer.go): then no
	// session starts.
	wctx := lr.waitCtx(ctx)
	if err := r.budget.waitQuota(wctx, func(until time.Time) {
		r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: "usage limit: no session starts before " + until.Local().Format(time.TimeOnly)})
	}); err != nil {
		lr.giveBackSession()
		return Outcome{}, interrupted, nil, false
	}
	if r.budget.exhausted() || r.budget.stopped() {
		lr.giveBackSession()
		return Outcome{}, state.Outcome{Kind: state.OutcomeWaveBudget, Detail: r.budget.why()}, nil, false
	}
	if lr.n.heldSession {
		lr.n.heldSession = false
	} else if err := r.sessions.Acquire(wctx, lr.n); err != nil {
		return Outcome{}, interrupted, nil, false
	}
	defer r.sessions.Release()
	var slotLock *os.File
	if r.o.Slots != nil {
		release, lock, err := r.o.Slots.Acquire(wctx, lr.id, kind)
		if err != nil {
			return Outcome{}, interrupted, nil, false
		}
		defer release()
		slotLock = lock
	}
	brief, data, err := lr.brief(ctx, kind, pass)
	if err != nil {
		return Outcome{}, state.Outcome{Kind: state.OutcomeNoStart, Detail: err.Error()}, nil, false
	}
	head, _ := r.o.Git.Head(ctx, lr.dir)
	alsoBefore := lr.neighbourHeads(ctx)
	if err := lr.ensureLogDir(); err != nil {
		return Outcome{}, state.Outcome{Kind: state.OutcomeNoStart, Detail: "cannot make the log folder: " + err.Error()}, nil, false
	}
	i, err := lr.beginStep(kind, pass, model)
	if err != nil {
		return Outcome{}, state.Outcome{}, err, false
	}
	sess := Session{
		Wave: r.o.Config.Wave.Name, Lot: lr.id, Step: kind, Pass: pass, Agent: lr.n.lot.Agent, Model: model, FallbackModel: lr.n.lot.FallbackModel,
		Dir: lr.dir, Brief: brief, ReadOnly: readOnly, SessionID: newUUID(), LogPrefix: lr.logPath(i, kind, ""),
		Timeout: lr.n.lot.Timeout, AddDirs: data.AlsoDirs, WaveID: r.waveID(), SlotLock: slotLock,
		LogLimit: int64(lr.n.lot.LogLimit), Limits: stepLimits(lr.n.lot.Limits),
		ReportSchema: kind.ReportSchema(),
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
	if !readOnly {
		// Only a write step's timeout looks at it (agent.Session.Moved).
		sess.Moved = lr.movement(ctx)
	}
	sess.Env = lr.childEnv("")
	sess.DenyHosts = r.remoteHosts(ctx, lr.n.lot.Repos())
	remotes := lr.remoteStates(ctx)
	sess.Note = func(msg string) { r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: msg}) }
	watch := lr.watchStep(ctx, kind)
	sctx, sessionDone := r.sessionCtx(ctx)
	out := r.o.Agent.Run(sctx, sess)
	sessionDone()
	if out.WriteErr != nil {
		// The session's files could not be written: the machine's error,
		// which stops the wave (machinestop.go); the adapter ended the
		// session already.
		out.Status, out.Cause = state.StepInterrupted, fmt.Sprintf("%s step: %s", kind, writeFailure(out.WriteErr, sess.LogPrefix+".json"))
		r.machineStop(out.Cause)
	}
	// A session ended by an API failure pauses its step: recorded
	// interrupted, whatever the adapter's status (apifail.go).
	if out.LimitHit != "" && out.Status == state.StepFailed {
		out.Cause = limitCause("session", lr.n.lot.Limits, out.LimitHit)
	}
	apiFail, apiCause := out.API != APINone && out.Status == state.StepFailed, out.Cause
	lr.checkConfig(ctx, watch) // before any other git call (cfgguard.go)
	if pidErr != nil {
		return out, state.Outcome{}, pidErr, false
	}
	if pushed := lr.pushedTo(ctx, remotes); pushed != "" {
		out.Status, out.Cause = state.StepFailed, "a push happened during the session: the remotes of repo "+pushed+" changed"
		r.incident("lot " + lr.id + ": " + out.Cause)
	}
	out.Status, out.Cause = withIncident(out.Status, out.Cause, lr.checkRefs(ctx, watch))
	if apiFail = apiFail && out.Status == state.StepFailed && out.Cause == apiCause; apiFail {
		out.Status = state.StepInterrupted
	}
	counted, micros, cacheRead := r.budget.add(out.Usage, out.CostMicros)
	if err := r.o.Store.UpdateWave(func(st *state.State) {
		st.Consumed = state.Consumed{Counted: counted, CostMicros: micros, CacheRead: cacheRead,
			CostEstimated: st.Consumed.CostEstimated || out.CostEstimated}
	}); err != nil {
		return out, state.Outcome{}, err, false
	}
	after, _ := r.o.Git.Head(ctx, lr.dir)
	var commits []string
	if !readOnly && after != head && head != "" {
		commits, _ = r.o.Git.Commits(ctx, lr.dir, head, after)
	}
	var alsoCommits map[string][]string
	if !readOnly {
		alsoCommits = lr.neighbourCommits(ctx, alsoBefore)
	}
	denied := deniedCalls(out.Denials)
	status := out.Status
	if ctx.Err() != nil && status != state.StepOK {
		status = state.StepInterrupted
	}
	// Files cut by the log_limit are said in the step's cause (OutputCut).
	if out.OutputCut > 0 {
		out.Cause = joinCause(out.Cause, "session "+cutNote(out.OutputCut, lr.n.lot.LogLimit))
	}
	if err := lr.endStep(i, status, out.Cause, func(s *state.Step) {
		s.Usage, s.CostMicros, s.HeadAfter, s.Commits, s.Report = out.Usage, out.CostMicros, after, commits, sess.LogPrefix+".json"
		s.OutputCut = out.OutputCut
		s.AlsoCommits = alsoCommits
		s.Denied = denied
		s.CostEstimated = out.CostEstimated
		if (kind == state.StepReview || kind == state.StepRecheck) && out.Report != nil {
			c := out.Report.Conform()
			s.Conform = &c
		}
	}); err != nil {
		return out, state.Outcome{}, err, false
	}
	w := uncited(slices.Concat(commits, flatCommits(alsoCommits)), lr.id)
	for _, c := range out.PushAttempts {
		w = append(w, "the session ran a push command: "+c)
		r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: "push attempt: " + c})
	}
	for _, d := range denied {
		msg := string(kind) + " tried " + d + ": denied"
		w = append(w, msg)
		r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: msg})
	}
	if len(w) > 0 {
		if err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Warnings = append(l.Warnings, w...) }); err != nil {
			return out, state.Outcome{}, err, false
		}
	}
	if len(commits) > 0 || len(alsoCommits) > 0 {
		if err := lr.flagAgentConfig(ctx); err != nil { // agentconfig.go
			return out, state.Outcome{}, err, false
		}
	}
	if apiFail && ctx.Err() == nil {
		o, retry := lr.apiOutcome(kind, out, tries, sess.Timeout)
		return out, o, nil, retry
	}
	switch status {
	case state.StepOK:
		return out, okOutcome, nil, false
	case state.StepInterrupted:
		if ctx.Err() == nil && r.apiStopped() != "" {
			return out, state.Outcome{Kind: state.OutcomeInterrupted, Detail: APIStopCause}, nil, false
		}
		return out, interrupted, nil, false
	case state.StepQuota:
		if r.o.Config.Wave.OnQuota == spec.OnQuotaWait {
			r.budget.pauseUntil(out.ResetAt, r.now())
			return out, state.Outcome{}, nil, true
		}
		r.budget.quota(out.ResetAt)
		return out, state.Outcome{Kind: state.OutcomeQuota, Detail: out.Cause}, nil, false
	default:
		return out, state.Outcome{Kind: state.OutcomeFailed, Status: status, Detail: out.Cause}, nil, false
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
// It reads them whatever the context: a session stopped by a signal is
// checked too, and a cancelled read would pass for a change.
func (lr *lotRun) pushedTo(ctx context.Context, before map[*spec.Repo]string) string {
	ctx = context.WithoutCancel(ctx)
	for _, rp := range lr.n.lot.Repos() {
		if lr.r.o.Git.RemoteState(ctx, rp) != before[rp] {
			return rp.Name
		}
	}
	return ""
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
//
// Its first look is the worktrees as the session starts. Before the lot's
// first write session in worktrees this run made for it (lotRun.pristine:
// made clean, and only read-only sessions, which must leave them as they
// were, ran there since), they are known to be clean: no `git status` then,
// on the way from the dependency's end to the session's start.
func (lr *lotRun) movement(ctx context.Context) func() bool {
	last := lr.headsAll(ctx)
	var dirty []string
	if !lr.pristine {
		dirty, _ = lr.dirtyAll(ctx)
	}
	lr.pristine = false
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
