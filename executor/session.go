package executor

import (
	"context"
	"time"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
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
// The step's agent, model and fallback are those the step-kind table's
// agent class gives it (planner.StepAgent).
func (lr *lotRun) session(ctx context.Context, kind state.StepKind, pass int, readOnly bool) (Outcome, state.Outcome, error) {
	tries := apiTries{start: lr.r.now()}
	for {
		out, o, err, retry := lr.sessionOnce(ctx, kind, pass, readOnly, &tries)
		if !retry {
			return out, o, err
		}
		if tries.wait > 0 && !lr.waitRetry(ctx, &tries) {
			return out, interrupted, nil
		}
	}
}

var interrupted = state.Outcome{Kind: state.OutcomeInterrupted}

// sessionOnce runs one attempt of a session step: the waits for the
// usage limit and the session semaphore, the brief, then the step through
// the step runner; it records the step's begin and end, the usage, and
// returns the outcome, and retry when the step is to run again in a fresh
// session (a usage limit waited for, an API failure retried).
func (lr *lotRun) sessionOnce(ctx context.Context, kind state.StepKind, pass int, readOnly bool, tries *apiTries) (Outcome, state.Outcome, error, bool) {
	if o, ok := lr.awaitSession(ctx, kind); !ok {
		return Outcome{}, o, nil, false
	}
	defer lr.r.sessions.Release()
	req, o, ok := lr.sessionRequest(ctx, kind, pass, readOnly)
	if !ok {
		return Outcome{}, o, nil, false
	}
	res, got, err := lr.runSession(ctx, req)
	if req.UX != nil {
		lr.ux = res.UX
	}
	out := Outcome{Status: res.Status, Usage: res.Usage, CostMicros: res.CostMicros, CostEstimated: res.CostEstimated,
		Cause: res.Cause, ResetAt: res.ResetAt, API: res.API, Report: res.Report, OutputCut: res.OutputCut}
	if err != nil {
		return out, state.Outcome{}, err, false
	}
	if got.index < 0 {
		return out, interrupted, nil, false
	}
	status, err := lr.recordSession(ctx, kind, res, got.index)
	if err != nil {
		return out, state.Outcome{}, err, false
	}
	if res.API != APINone && ctx.Err() == nil {
		o, retry := lr.apiOutcome(kind, out, tries, req.Timeout)
		return out, o, nil, retry
	}
	o, retry := lr.sessionOutcome(ctx, status, out)
	return out, o, nil, retry
}

// awaitSession waits, before a session of kind, for a usage limit's reset
// and for the lot's unit of the session cap; the waits end early on the
// lead's drop or stop (steer.go). ok says the unit is held (the caller
// releases it); otherwise o is why no session starts (interrupted, or the
// wave's budget spent).
func (lr *lotRun) awaitSession(ctx context.Context, kind state.StepKind) (o state.Outcome, ok bool) {
	r := lr.r
	wctx := lr.waitCtx(ctx)
	if err := r.budget.waitQuota(wctx, func(until time.Time) {
		r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: "usage limit: no session starts before " + until.Local().Format(time.TimeOnly)})
	}); err != nil {
		lr.giveBackSession()
		return interrupted, false
	}
	if r.budget.exhausted() || r.budget.stopped() {
		lr.giveBackSession()
		return state.Outcome{Kind: state.OutcomeWaveBudget, Detail: r.budget.why()}, false
	}
	if lr.n.heldSession {
		lr.n.heldSession = false
	} else if err := r.sessions.Acquire(wctx, lr.n); err != nil {
		return interrupted, false
	}
	return state.Outcome{}, true
}

// sessionRequest is the step request of a session of kind and pass: the
// rendered brief, the step's agent with its model and fallback
// (planner.StepAgent: the lot's agent for a write step, its review agent
// for a read-only one), the lot's environment, the step-kind table's
// report schema, the timeout (the review timeout for a read-only session),
// its log prefix. ok false: it cannot start (o says why).
func (lr *lotRun) sessionRequest(ctx context.Context, kind state.StepKind, pass int, readOnly bool) (req step.Request, o state.Outcome, ok bool) {
	brief, _, err := lr.brief(ctx, kind, pass)
	if err != nil {
		return req, state.Outcome{Kind: state.OutcomeNoStart, Detail: err.Error()}, false
	}
	if err := lr.ensureLogDir(); err != nil {
		return req, state.Outcome{Kind: state.OutcomeNoStart, Detail: "cannot make the log folder: " + err.Error()}, false
	}
	req = lr.request(kind, pass)
	a, model, fallback := planner.StepAgent(lr.n.lot, kind)
	req.Agent, req.Model, req.FallbackModel, req.Brief = agentName(a), model, fallback, brief
	req.SessionID, req.ReadOnly, req.Timeout, req.Env = newUUID(), readOnly, lr.n.lot.Timeout, lr.childEnv("")
	req.ReportSchema = kind.ReportSchema()
	if readOnly {
		req.Timeout = lr.n.lot.ReviewTimeout
	} else {
		req.Pristine, lr.pristine = lr.pristine, false
	}
	var idx int
	lr.r.o.Store.View(func(st *state.State) {
		if l := st.Lots[lr.id]; l != nil {
			idx = len(l.Steps)
		}
	})
	req.Log = lr.logPath(idx, kind, "")
	if info, _ := state.Info(kind); info.Browser && lr.n.lot.UX != nil {
		u := lr.n.lot.UX
		req.UX = &step.UXApp{Command: u.Command, URL: u.URL, Timeout: u.Timeout, Paths: u.Paths,
			ShotsDir: lr.r.o.Layout.StepFile(lr.id, idx, string(kind), "-shots")}
	}
	return req, state.Outcome{}, true
}

// runSession runs the session req through the step runner, the step's
// begin journalled when the runner begins it. The session ends with ctx,
// or when the wave stops on an API failure (sessionCtx); before it
// begins, the lead's drop or stop ends its wait for a machine slot too.
func (lr *lotRun) runSession(ctx context.Context, req step.Request) (step.Result, ran, error) {
	sctx, sessionDone := lr.r.sessionCtx(ctx)
	defer sessionDone()
	begun := make(chan struct{})
	stopWait := context.AfterFunc(lr.waitCtx(ctx), func() {
		select {
		case <-begun:
		default:
			sessionDone()
		}
	})
	defer stopWait()
	res, got, err := lr.runStep(sctx, req, func() (int, error) {
		close(begun)
		return lr.beginSession(req)
	})
	if err == nil {
		err = got.err
	}
	return res, got, err
}

// recordSession records what the session of kind at journal index i cost
// (the wave's consumption) and its end (usage, commits, report, verdict),
// and flags agent config files its commits touched. It returns the
// step's status as recorded: interrupted when ctx ended it.
func (lr *lotRun) recordSession(ctx context.Context, kind state.StepKind, res step.Result, i int) (state.StepStatus, error) {
	r := lr.r
	lr.roChanged = append(lr.roChanged, res.Changed...)
	counted, micros, cacheRead := r.budget.add(res.Usage, res.CostMicros)
	if err := r.o.Store.UpdateWave(func(st *state.State) {
		st.Consumed = state.Consumed{Counted: counted, CostMicros: micros, CacheRead: cacheRead,
			CostEstimated: st.Consumed.CostEstimated || res.CostEstimated}
	}); err != nil {
		return "", err
	}
	status := res.Status
	if ctx.Err() != nil && status != state.StepOK {
		status = state.StepInterrupted
	}
	if err := lr.endStep(i, status, res.Cause, func(s *state.Step) {
		s.Usage, s.CostMicros, s.HeadAfter, s.Commits, s.Report = res.Usage, res.CostMicros, res.HeadAfter, res.Commits, res.ReportPath
		s.OutputCut = res.OutputCut
		s.AlsoCommits = res.AlsoCommits
		s.Denied = res.Denied
		s.CostEstimated = res.CostEstimated
		s.RawUsage = res.RawUsage
		if res.UX != nil {
			s.NotVerified, s.Screenshots = res.UX.NotVerified, res.UX.Screenshots
		}
		if info, _ := state.Info(kind); info.RecordsVerdict && res.Report != nil && (res.UX == nil || res.UX.NotVerified == "") {
			c := res.Report.Conform()
			s.Conform = &c
		}
	}); err != nil {
		return "", err
	}
	if len(res.Commits) > 0 || len(res.AlsoCommits) > 0 {
		if err := lr.flagAgentConfig(ctx); err != nil { // agentconfig.go
			return "", err
		}
	}
	return status, nil
}

// sessionOutcome is the life cycle's outcome of a session that ended with
// status (out: how): ok, interrupted (by cadence, or by the wave's stop on
// an API failure), a usage limit (retry: wait for its reset with on_quota
// = "wait", then run the step again), or failed.
func (lr *lotRun) sessionOutcome(ctx context.Context, status state.StepStatus, out Outcome) (o state.Outcome, retry bool) {
	r := lr.r
	switch status {
	case state.StepOK:
		return okOutcome, false
	case state.StepInterrupted:
		if ctx.Err() == nil && r.apiStopped() != "" {
			return state.Outcome{Kind: state.OutcomeInterrupted, Detail: APIStopCause}, false
		}
		return interrupted, false
	case state.StepQuota:
		if r.o.Config.Wave.OnQuota == spec.OnQuotaWait {
			r.budget.pauseUntil(out.ResetAt, r.now())
			return state.Outcome{}, true
		}
		r.budget.quota(out.ResetAt)
		return state.Outcome{Kind: state.OutcomeQuota, Detail: out.Cause}, false
	default:
		return state.Outcome{Kind: state.OutcomeFailed, Status: status, Detail: out.Cause}, false
	}
}
