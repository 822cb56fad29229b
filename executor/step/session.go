package step

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// runSession runs one agent session as a step, inside the guard: the
// machine's session slot (Slots), the session built for the adapter, the
// push check (the remotes compared around it), the config check as soon
// as the agent returns, then the refs; what the session committed, per
// repository; for a read-only step, whether it left every worktree as it
// found it.
func (l *Local) runSession(ctx context.Context, req Request, lot guard.Lot, a *spec.Agent, events Events) Result {
	kind := req.Kind
	sess := newSession(req, a)
	if l.slots != nil {
		release, lock, err := l.slots.Acquire(ctx, req.ID, kind)
		if err != nil {
			return Result{Status: state.StepInterrupted, Cause: "stopped by cadence", Unstarted: true}
		}
		defer release()
		sess.SlotLock = lock
	}
	if cause := begin(events, kind); cause != "" {
		return Result{Status: state.StepInterrupted, Cause: cause, Unstarted: true}
	}
	return l.sessionBegun(ctx, req, lot, sess, events)
}

// newSession is the agent.Session of the session step req, with agent a,
// before its slot is held and its begin emitted.
func newSession(req Request, a *spec.Agent) agent.Session {
	sess := agent.Session{
		Wave: req.Wave, Lot: req.ID, Step: req.Kind, Pass: req.Pass, Agent: a, Model: req.Model, FallbackModel: req.FallbackModel,
		Dir: req.Dir, Brief: req.Brief, ReadOnly: req.ReadOnly, SessionID: req.SessionID, LogPrefix: req.Log, ReportSchema: req.ReportSchema,
		Timeout: req.Timeout, WaveID: req.WaveID,
		LogLimit: int64(req.LogLimit), Limits: stepLimits(req.Limits),
	}
	for _, r := range req.Repos[min(1, len(req.Repos)):] {
		sess.AddDirs = append(sess.AddDirs, r.Worktree)
	}
	return sess
}

// sessionBegun runs the session sess of step req once its slot is held
// (sess.SlotLock) and its begin emitted: the guard around it, and what it
// left (runSession).
func (l *Local) sessionBegun(ctx context.Context, req Request, lot guard.Lot, sess agent.Session, events Events) Result {
	kind := req.Kind
	head, _ := l.git.Head(ctx, req.Dir)
	alsoBefore := l.neighbourHeads(ctx, lot)
	var roHeads string
	if req.ReadOnly {
		roHeads = l.headsAll(ctx, lot)
	}
	sess.Started = func(pid int) {
		send(events, Event{Kind: EventStarted, PID: pid, SessionID: req.SessionID, HeadBefore: head})
	}
	sess.Progress = func(u state.Usage) { send(events, Event{Kind: EventProgress, Usage: u}) }
	sess.Note = func(msg string) { send(events, Event{Kind: EventNote, Text: msg}) }
	if !req.ReadOnly {
		// Only a write step's timeout looks at it (agent.Session.Moved).
		sess.Moved = l.movement(ctx, lot, req.Pristine)
	}
	sess.Env = req.Env
	sess.DenyHosts = l.remoteHosts(ctx, lot.Repos)
	sess.DenyRead = l.denyRead
	remotes := l.remoteStates(ctx, lot)
	watch := l.before(ctx, lot, guard.Options{Kind: string(kind), Checkout: req.OutsideSandbox}, events)
	out := l.agent.Run(ctx, sess)
	// What the session left is read whatever ctx says: a session stopped
	// by cadence (its shutdown, the wave's stop on an API failure) is
	// recorded with its commits too.
	sctx := ctx
	ctx = context.WithoutCancel(ctx)
	res := Result{HeadBefore: head, ReportPath: req.Log + ".json"}
	if out.WriteErr != nil {
		// The session's files could not be written: the machine's error,
		// which stops the wave; the adapter ended the session already.
		out.Status, out.Cause = state.StepInterrupted, fmt.Sprintf("%s step: %s", kind, WriteFailure(out.WriteErr, sess.LogPrefix+".json"))
		res.WriteFailed = true
	}
	if out.LimitHit != "" && out.Status == state.StepFailed {
		out.Cause = limitCause("session", req.Limits, out.LimitHit)
	}
	// A session ended by an API failure pauses its step: interrupted,
	// whatever the adapter's status, unless an incident failed it.
	apiFail, apiCause := out.API != agent.APINone && out.Status == state.StepFailed, out.Cause
	watch.CheckConfig(ctx) // before any other git call (guard/config.go)
	if pushed := l.pushedTo(ctx, lot, remotes); pushed != "" {
		out.Status, out.Cause = state.StepFailed, "a push happened during the session: the remotes of repo "+pushed+" changed"
		res.Incidents = append(res.Incidents, "lot "+req.ID+": "+out.Cause)
	}
	out.Status, out.Cause = withIncident(out.Status, out.Cause, guarded(&res, req.ID, watch.After(ctx), events))
	if apiFail = apiFail && out.Status == state.StepFailed && out.Cause == apiCause; apiFail {
		out.Status = state.StepInterrupted
		res.API = out.API
	}
	res.Usage, res.CostMicros, res.CostEstimated, res.ResetAt, res.Report = out.Usage, out.CostMicros, out.CostEstimated, out.ResetAt, out.Report
	res.RawUsage = out.RawUsage
	res.HeadAfter, _ = l.git.Head(ctx, req.Dir)
	if !req.ReadOnly && res.HeadAfter != head && head != "" {
		res.Commits, _ = l.git.Commits(ctx, req.Dir, head, res.HeadAfter)
	}
	if !req.ReadOnly {
		res.AlsoCommits = l.neighbourCommits(ctx, lot, alsoBefore)
	}
	res.Denied = deniedCalls(out.Denials)
	res.Status = out.Status
	if sctx.Err() != nil && res.Status != state.StepOK {
		res.Status = state.StepInterrupted
	}
	// Files cut by the log_limit are said in the step's cause (OutputCut).
	if out.OutputCut > 0 {
		out.Cause = joinCause(out.Cause, "session "+cutNote(out.OutputCut, req.LogLimit))
	}
	res.Cause, res.OutputCut, res.LimitHit = out.Cause, out.OutputCut, string(out.LimitHit)
	res.Warnings = append(res.Warnings, uncited(slices.Concat(res.Commits, flatCommits(res.AlsoCommits)), req.ID)...)
	for _, c := range out.PushAttempts {
		res.Warnings = append(res.Warnings, "the session ran a push command: "+c)
		send(events, Event{Kind: EventNote, Text: "push attempt: " + c})
	}
	for _, d := range res.Denied {
		msg := string(kind) + " tried " + d + ": denied"
		res.Warnings = append(res.Warnings, msg)
		send(events, Event{Kind: EventNote, Text: msg})
	}
	if req.ReadOnly {
		res.Changed = l.readOnlyChanges(ctx, lot, roHeads)
	}
	if sess.Browser != nil {
		res.UX = &UXResult{NotVerified: notVerified(out.Browser)}
	}
	return res
}

// withIncident is a session's status and cause once its check found an
// incident: failed, with the incident's cause first.
func withIncident(status state.StepStatus, cause, incident string) (state.StepStatus, string) {
	if incident == "" {
		return status, cause
	}
	if cause != "" {
		incident += " (and the session: " + cause + ")"
	}
	return state.StepFailed, incident
}

// readOnlyChanges says what a read-only session changed in the lot's
// worktrees since heads (headsAll before it): each HEAD, and any
// uncommitted file. It reads whatever ctx says: a session stopped by a
// signal is checked too.
func (l *Local) readOnlyChanges(ctx context.Context, lot guard.Lot, heads string) []string {
	cctx := context.WithoutCancel(ctx)
	after := l.headsAll(cctx, lot)
	dirty, derr := l.dirtyAll(cctx, lot)
	var what []string
	if after != heads {
		what = append(what, "HEAD moved")
	}
	if derr != nil {
		what = append(what, "its status cannot be read: "+derr.Error())
	}
	if len(dirty) > 0 {
		what = append(what, "uncommitted files "+strings.Join(limit(dirty, 10), ", "))
	}
	return what
}

// remoteStates records what the remotes of the lot's repositories hold.
func (l *Local) remoteStates(ctx context.Context, lot guard.Lot) map[string]string {
	m := map[string]string{}
	for _, r := range lot.Repos {
		m[r.Repo.Name] = l.git.RemoteState(ctx, r.Repo)
	}
	return m
}

// pushedTo names a repository whose remotes changed since before, or "".
// It reads them whatever the context: a session stopped by a signal is
// checked too, and a cancelled read would pass for a change.
func (l *Local) pushedTo(ctx context.Context, lot guard.Lot, before map[string]string) string {
	ctx = context.WithoutCancel(ctx)
	for _, r := range lot.Repos {
		if l.git.RemoteState(ctx, r.Repo) != before[r.Repo.Name] {
			return r.Repo.Name
		}
	}
	return ""
}

// dirtyAll lists the uncommitted changes of all the lot's worktrees; a
// neighbour's are named repo:path.
func (l *Local) dirtyAll(ctx context.Context, lot guard.Lot) ([]string, error) {
	var all []string
	for i, r := range lot.Repos {
		d, err := l.git.Dirty(ctx, r.Dir)
		if err != nil {
			return nil, err
		}
		for _, f := range d {
			if i > 0 {
				f = r.Repo.Name + ":" + f
			}
			all = append(all, f)
		}
	}
	return all, nil
}

// headsAll is the HEADs of all the lot's worktrees, as one string.
func (l *Local) headsAll(ctx context.Context, lot guard.Lot) string {
	var b strings.Builder
	for _, r := range lot.Repos {
		h, _ := l.git.Head(ctx, r.Dir)
		b.WriteString(h + "\n")
	}
	return b.String()
}

// movement returns a Moved func for a write step: whether the HEAD or the
// uncommitted files of any of the lot's worktrees changed since the last
// call. Its first look is the worktrees as the session starts; pristine
// worktrees (as this run made them for a lot that had run no step) are
// known to be clean: no git status then.
func (l *Local) movement(ctx context.Context, lot guard.Lot, pristine bool) func() bool {
	last := l.headsAll(ctx, lot)
	var dirty []string
	if !pristine {
		dirty, _ = l.dirtyAll(ctx, lot)
	}
	lastDirty := strings.Join(dirty, "\x00")
	return func() bool {
		h := l.headsAll(ctx, lot)
		d, _ := l.dirtyAll(ctx, lot)
		now := strings.Join(d, "\x00")
		moved := h != last || now != lastDirty
		last, lastDirty = h, now
		return moved
	}
}

// neighbourHeads is the HEAD of each neighbour worktree ("" when it cannot
// be read), by repository name.
func (l *Local) neighbourHeads(ctx context.Context, lot guard.Lot) map[string]string {
	heads := map[string]string{}
	for _, r := range lot.Repos[min(1, len(lot.Repos)):] {
		heads[r.Repo.Name], _ = l.git.Head(ctx, r.Dir)
	}
	return heads
}

// neighbourCommits lists, per neighbour name, the commits added in its
// worktree since before (neighbourHeads); nil when there are none.
func (l *Local) neighbourCommits(ctx context.Context, lot guard.Lot, before map[string]string) map[string][]string {
	var all map[string][]string
	for _, r := range lot.Repos[min(1, len(lot.Repos)):] {
		head := before[r.Repo.Name]
		after, _ := l.git.Head(ctx, r.Dir)
		if head == "" || after == "" || after == head {
			continue
		}
		if cs, _ := l.git.Commits(ctx, r.Dir, head, after); len(cs) > 0 {
			if all == nil {
				all = map[string][]string{}
			}
			all[r.Repo.Name] = cs
		}
	}
	return all
}

// flatCommits is every commit of a neighbourCommits map, each prefixed
// with its repository ("repo: sha subject"), by repository name.
func flatCommits(m map[string][]string) []string {
	var out []string
	for _, repo := range slices.Sorted(maps.Keys(m)) {
		for _, c := range m[repo] {
			out = append(out, repo+": "+c)
		}
	}
	return out
}

// uncited returns a warning for each commit whose message does not cite
// the lot id.
func uncited(commits []string, id string) []string {
	var w []string
	for _, c := range commits {
		if !strings.Contains(c, id) {
			w = append(w, "commit does not cite the lot id: "+c)
		}
	}
	return w
}

// deniedCalls are the session's denied tool calls, each once.
func deniedCalls(ds []agent.Denial) []string {
	var out []string
	for _, d := range ds {
		if s := d.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// limit returns at most n of xs, with "and K more" for the rest.
func limit(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(xs[:n:n], fmt.Sprintf("and %d more", len(xs)-n))
}
