package step

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"

	"github.com/cadence-run/cadence/internal/httpready"
	"github.com/cadence-run/cadence/internal/originproxy"
)

// runUX runs a UX review (docs/ux.md): the machine's session slot and the
// step's begin, then the application (req.UX.Command, in the step
// sandbox, its output to req.Log+".app.log") until its URL answers, the
// read-only session with a browser on it (agent.Browser: a scratch folder
// in the machine's temporary folder, uxScratchDir, removed after), the application stopped with
// its whole tree however the session ended, and the screenshots kept
// (keepShots). An application that does not answer is no failure: the
// step ends ok with UXResult.NotVerified saying why, and its last output.
func (l *Local) runUX(ctx context.Context, req Request, lot guard.Lot, a *spec.Agent, events Events) Result {
	kind := req.Kind
	if req.UX == nil || req.UX.ShotsDir == "" {
		return Result{Status: state.StepFailed, Cause: fmt.Sprintf("the %s step names no application (its ux block)", kind), Unstarted: true}
	}
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
	shots, scratch, err := uxFolders(req.UX.ShotsDir, uxScratchDir(uxTempDir(), req.WaveID, req.SessionID))
	if err != nil {
		return Result{Status: state.StepInterrupted, Cause: fmt.Sprintf("%s step: %s", kind, WriteFailure(err, req.UX.ShotsDir)), WriteFailed: true}
	}
	defer os.RemoveAll(scratch)
	// The read-only check covers the application too: it runs in the
	// lot's worktree before the session starts.
	roHeads := l.headsAll(ctx, lot)
	stop, why := l.startApp(ctx, req)
	defer stop()
	if why != "" {
		head, _ := l.git.Head(ctx, req.Dir)
		status := state.StepOK
		if ctx.Err() != nil {
			status, why = state.StepInterrupted, "stopped by cadence"
		}
		send(events, Event{Kind: EventNote, Text: "UX not verified: " + why})
		return Result{Status: status, Cause: notVerifiedCause(why), HeadBefore: head, HeadAfter: head, UX: &UXResult{NotVerified: why},
			Changed: l.readOnlyChanges(ctx, lot, roHeads)}
	}
	sess.Browser = &agent.Browser{URL: req.UX.URL, Paths: req.UX.Paths, ShotsDir: shots, Scratch: scratch}
	// The browser reaches the application's origin only, through a proxy
	// of cadence's (a redirect or a WebSocket to another local service is
	// refused); the session goes on without a browser when it cannot run.
	if host, ok := originHost(req.UX.URL); ok {
		if px, err := originproxy.Start(host); err == nil {
			defer px.Close()
			sess.Browser.Proxy = px.URL()
		}
	}
	res := l.sessionBegun(ctx, req, lot, sess, events)
	stop()
	res.Changed = l.readOnlyChanges(ctx, lot, roHeads)
	if res.UX == nil {
		res.UX = &UXResult{}
	}
	res.UX.Screenshots = keepShots(shots)
	if res.UX.NotVerified != "" && res.Status == state.StepOK {
		res.Cause = joinCause(res.Cause, notVerifiedCause(res.UX.NotVerified))
	}
	return res
}

// notVerifiedCause is a UX step's cause when it could not look at the
// application.
func notVerifiedCause(why string) string { return "UX not verified: " + why }

// uxFolders makes the shots folder (what an earlier attempt left in it
// removed) and the empty scratch folder scratch (uxScratchDir: in the
// machine's temporary folder, not beside the shots, for chromium's
// socket; the caller removes it).
func uxFolders(shots, scratch string) (string, string, error) {
	if err := os.RemoveAll(shots); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(shots, 0o700); err != nil {
		return "", "", err
	}
	if err := makeUXScratch(scratch); err != nil {
		return "", "", err
	}
	return shots, scratch, nil
}

// startApp starts the application of the UX step req (when it has a
// command) and waits until its URL answers. It returns how to stop it
// (always safe to call, more than once) and why it is not usable (""
// when it answers).
func (l *Local) startApp(ctx context.Context, req Request) (stop func(), why string) {
	u := req.UX
	ready := proc.Ready{URL: u.URL, Answers: httpready.Answers, Timeout: u.Timeout}
	if u.Command == "" {
		if err := proc.WaitAnswer(ctx, ready); err != nil {
			return func() {}, fmt.Sprintf("the application does not answer at %s within %s (it has no ux command: cadence does not start it)", u.URL, u.Timeout)
		}
		return func() {}, ""
	}
	// Something that answers before the application is started is not
	// it (its port taken by another lot's app, a stale server): the
	// session would review that server's pages.
	if httpready.Answers(ctx, u.URL) {
		return func() {}, fmt.Sprintf("something already answers at %s before cadence starts the application (its port is taken): the session would not look at the lot's application", u.URL)
	}
	appReq := req
	appReq.Command = u.Command
	cmd, boxed, err := l.shellCmd(ctx, appReq, req.Dir, l.stepEnv(req))
	if err != nil {
		return func() {}, "the app did not start: its sandbox: " + err.Error()
	}
	f := newStepLog(req.Log+".app.log", req.LogLimit, nil)
	cmd.Stdout, cmd.Stderr = f, f
	var st *box.Status
	if boxed {
		if st, err = box.NewStatus(); err != nil {
			return func() {}, "the app did not start: " + err.Error()
		}
		cmd.ExtraFiles = []*os.File{st.Writer()}
	}
	s := proc.StartService(ctx, cmd, ready)
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_, _ = s.Stop()
		if st != nil {
			st.Started()
		}
		_ = f.Close()
	}
	if err := s.WaitReady(ctx); err != nil {
		var ne *proc.NotReadyError
		if errors.As(err, &ne) {
			return stop, "the app did not start: " + ne.Error()
		}
		return stop, "the app did not start: " + err.Error()
	}
	return stop, ""
}

// notVerified says why the session's browser evidence does not show that
// it looked at the application ("" when it does).
func notVerified(e *agent.BrowserEvidence) string {
	switch {
	case e == nil:
		return "the agent CLI gave no browser evidence"
	case e.Verified():
		return ""
	case !e.Connected:
		return "the browser was not connected" + causeSuffix(e.Cause)
	}
	return "no screenshot came back to the session" + causeSuffix(e.Cause)
}

func causeSuffix(cause string) string {
	if cause == "" {
		return ""
	}
	return ": " + cause
}

// keepShots keeps, in dir, at most state.MaxScreenshots PNG files of at
// most state.MaxScreenshotBytes each (the first by name), removing every
// other entry, and returns the kept files' paths, sorted.
func keepShots(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var kept []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		ok := err == nil && info.Mode().IsRegular() && strings.HasSuffix(e.Name(), ".png") &&
			info.Size() <= state.MaxScreenshotBytes && len(kept) < state.MaxScreenshots
		if !ok {
			if err := os.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			continue
		}
		kept = append(kept, p)
	}
	slices.Sort(kept)
	return kept
}

// originHost is the host:port of an http(s) URL, the port given by the
// scheme when the URL has none.
func originHost(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	port := u.Port()
	switch {
	case port != "":
	case u.Scheme == "http":
		port = "80"
	case u.Scheme == "https":
		port = "443"
	default:
		return "", false
	}
	return net.JoinHostPort(u.Hostname(), port), true
}
