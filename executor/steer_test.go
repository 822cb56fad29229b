package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// gates holds scripted sessions until the test lets them end: a session of
// a gated key ("<lot>-<step>") says it started, then waits (or, with
// forever, runs until its context ends).
type gates struct {
	mu      sync.Mutex
	open    map[string]chan struct{}
	forever map[string]bool
	started chan string
	seen    map[string]bool
}

func newGates(keys ...string) *gates {
	g := &gates{open: map[string]chan struct{}{}, forever: map[string]bool{}, started: make(chan string, 64), seen: map[string]bool{}}
	for _, k := range keys {
		g.open[k] = make(chan struct{})
	}
	return g
}

// script is the fake agent's script: gated sessions wait; every session
// ends ok with a report, a write step asks "Which store?" while its brief
// has no answer when ask names its lot.
func (g *gates) script(ask string) func(s Session) (Outcome, time.Duration) {
	return func(s Session) (Outcome, time.Duration) {
		out := Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}
		if s.ReadOnly {
			out.Report = &Report{Verdict: "fine"}
		}
		if s.Lot == ask && !s.ReadOnly && !strings.Contains(s.Brief, "Redis") {
			out.Report.Questions = []string{"Which store?"}
		}
		key := s.Lot + "-" + string(s.Step)
		g.mu.Lock()
		ch, forever := g.open[key], g.forever[key]
		g.mu.Unlock()
		if forever {
			g.started <- key
			return out, time.Hour // ends when the session's context does
		}
		if ch != nil {
			g.started <- key
			<-ch
		}
		return out, time.Millisecond
	}
}

// wait waits until the session key started.
func (g *gates) wait(t *testing.T, key string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for !g.seen[key] {
		select {
		case k := <-g.started:
			g.seen[k] = true
		case <-deadline:
			t.Fatalf("session %s never started", key)
		}
	}
}

func (g *gates) release(key string) { close(g.open[key]) }

// request sends req to the harness's wave and waits for its
// acknowledgement.
func (h *harness) request(req control.Request) control.Ack {
	h.t.Helper()
	ch := control.Channel{Dir: filepath.Join(h.dir, "wave.state.json.requests")}
	req, err := ch.Send(req)
	if err != nil {
		h.t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		a, ok, err := ch.ReadAck(req.ID)
		if err != nil {
			h.t.Fatal(err)
		}
		if ok {
			return a
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("request %+v never acknowledged", req)
	return control.Ack{}
}

// runAsync runs the harness's wave in the background.
func (h *harness) runAsync() <-chan Result {
	done := make(chan Result, 1)
	go func() {
		res, err := h.run(context.Background(), planner.Options{})
		if err != nil {
			h.t.Error(err)
		}
		done <- res
	}()
	return done
}

const oneSession = `wave "w" {
  max_sessions = 1
}
repo "r" {
  path = "."
  parallel = 4
}
`

// TestDropQueued: a queued lot of a live run never starts; it is handed
// back as dropped by the lead and its dependent is blocked; an unknown lot
// and a done one are refused with the reason.
func TestDropQueued(t *testing.T) {
	// after depends on both, so first and second are equally urgent:
	// first, first in the file, runs first.
	h := newHarness(t, oneSession+agentLots("first", "second")+`lot "after" {
  repo = repo.r
  brief = "x"
  depends_on = [lot.first, lot.second]
}
`)
	g := newGates("first-implement")
	h.agent.script = g.script("")
	done := h.runAsync()
	g.wait(t, "first-implement")
	a := h.request(control.Request{Kind: control.KindDrop, Lots: []string{"second", "nosuch"}})
	if len(a.Results) != 2 || !a.Results[0].Taken || a.Results[1].Taken || !strings.Contains(a.Results[1].Reason, "no lot nosuch") {
		t.Fatalf("ack %+v", a)
	}
	if a.PID != os.Getpid() {
		t.Errorf("ack pid %d", a.PID)
	}
	g.release("first-implement")
	res := <-done
	lots := h.lots()
	if l := lots["second"]; l.Status != state.LotHandedBack || l.Cause != state.DroppedCause || len(l.Steps) != 0 {
		t.Errorf("second = %+v", l)
	}
	if l := lots["after"]; l.Status != state.LotBlocked || l.BlockedBy != "second "+state.DroppedCause {
		t.Errorf("after = %+v", l)
	}
	if lots["first"].Status != state.LotDone || res.Status != state.WaveNeedsLead {
		t.Errorf("first = %+v, wave %s", lots["first"], res.Status)
	}
	for _, s := range h.agent.spans {
		if s.lot != "first" {
			t.Errorf("a session of %s ran", s.lot)
		}
	}
	// Dropping a done lot is refused, at rest too.
	store, err := state.OpenStore(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if r := DropAtRest(store, "first", time.Now()); r.Taken || r.Reason != "it is done" {
		t.Errorf("drop of a done lot: %+v", r)
	}
	// A drop taken again (its apply died before acknowledging it) holds.
	if r := DropAtRest(store, "second", time.Now()); !r.Taken || r.Reason != "already dropped" {
		t.Errorf("drop of a dropped lot: %+v", r)
	}
	store.UpdateLot("first", func(l *state.Lot) { l.Status, l.Cause, l.IntegratedSHA = state.LotFailed, "red", "" })
	if r := DropAtRest(store, "first", time.Now()); r.Taken || r.Reason != "it is already failed (red)" {
		t.Errorf("drop of a failed lot: %+v", r)
	}
}

// TestDropRunning: a running lot ends its current session, then is handed
// back with its commit kept; no review follows.
func TestDropRunning(t *testing.T) {
	h := newHarness(t, oneSession+agentLots("busy"))
	g := newGates("busy-implement")
	h.agent.script = g.script("")
	done := h.runAsync()
	g.wait(t, "busy-implement")
	a := h.request(control.Request{Kind: control.KindDrop, Lots: []string{"busy"}})
	if len(a.Results) != 1 || !a.Results[0].Taken || !strings.Contains(a.Results[0].Reason, "when its implement step ends") {
		t.Fatalf("ack %+v", a)
	}
	// Recorded before it was acknowledged, while the step still runs: a
	// cadence killed now leaves the lot dropped (Resume holds it).
	if l := h.lots()["busy"]; l.Dropped != "after its implement step" || l.Status != state.LotRunning {
		t.Errorf("busy while its step runs: %+v", l)
	} else if r := state.Resume(planner.Facts(h.cfg.Lot("busy")), l); r.Kind != state.ResumeHeld || r.Status != state.LotHandedBack {
		t.Errorf("resumption of a lot dropped mid-step: %+v", r)
	}
	// Asked again (a retry, a second terminal): it holds.
	if a := h.request(control.Request{Kind: control.KindDrop, Lots: []string{"busy"}}); !a.Results[0].Taken || a.Results[0].Reason != "already dropped" {
		t.Errorf("second drop: %+v", a)
	}
	g.release("busy-implement")
	<-done
	l := h.lots()["busy"]
	if l.Status != state.LotHandedBack || l.Cause != state.DroppedCause+" (after its implement step)" {
		t.Fatalf("busy = %+v", l)
	}
	if len(l.Steps) != 1 || l.Steps[0].Status != state.StepOK || l.Steps[0].Kind != state.StepImplement {
		t.Errorf("steps %+v", l.Steps)
	}
	if l.Branch == "" {
		t.Errorf("the branch is not recorded: %+v", l)
	}
}

// TestDropRunningNow: drop -now stops the running session; its step is
// recorded interrupted and the lot handed back.
func TestDropRunningNow(t *testing.T) {
	h := newHarness(t, oneSession+agentLots("busy"))
	g := newGates()
	g.forever["busy-implement"] = true
	h.agent.script = g.script("")
	done := h.runAsync()
	g.wait(t, "busy-implement")
	a := h.request(control.Request{Kind: control.KindDrop, Lots: []string{"busy"}, Now: true})
	if len(a.Results) != 1 || !a.Results[0].Taken {
		t.Fatalf("ack %+v", a)
	}
	res := <-done
	l := h.lots()["busy"]
	if l.Status != state.LotHandedBack || !strings.Contains(l.Cause, "its implement step was stopped") {
		t.Fatalf("busy = %+v", l)
	}
	if len(l.Steps) != 1 || l.Steps[0].Status != state.StepInterrupted {
		t.Errorf("steps %+v", l.Steps)
	}
	if res.Status != state.WaveNeedsLead {
		t.Errorf("wave %s", res.Status)
	}
}

// TestStopAfterCurrent: after cadence stop, the running lots end their
// current step and no new step or lot starts; the wave ends interrupted,
// and the next run resumes every lot to done.
func TestStopAfterCurrent(t *testing.T) {
	h := newHarness(t, `wave "w" {
  max_sessions = 2
}
repo "r" {
  path = "."
  parallel = 4
}
`+agentLots("a", "b", "c"))
	g := newGates("a-implement", "b-implement")
	h.agent.script = g.script("")
	done := h.runAsync()
	g.wait(t, "a-implement")
	g.wait(t, "b-implement")
	a := h.request(control.Request{Kind: control.KindStop})
	if !strings.Contains(a.Note, "2 running lot(s)") {
		t.Fatalf("ack %+v", a)
	}
	g.release("a-implement")
	g.release("b-implement")
	res := <-done
	if res.Status != state.WaveInterrupted || res.Stopped != StopCause {
		t.Fatalf("res %+v", res)
	}
	lots := h.lots()
	for _, id := range []string{"a", "b"} {
		l := lots[id]
		if l.Status != state.LotInterrupted || l.Cause != StopCause || len(l.Steps) != 1 || l.Steps[0].Status != state.StepOK {
			t.Errorf("%s = %+v", id, l)
		}
	}
	if l := lots["c"]; l != nil && len(l.Steps) > 0 {
		t.Errorf("c started: %+v", l)
	}
	spans := len(h.agent.spans)
	if spans != 2 {
		t.Errorf("%d sessions ran, want 2", spans)
	}
	// The next run resumes: the stop lasted one run.
	h.agent.script = newGates().script("")
	res = <-h.runAsync()
	if res.Status != state.WaveDone {
		t.Fatalf("resume: %+v", res)
	}
	for _, s := range h.agent.spans[spans:] {
		if s.step == state.StepImplement && s.lot != "c" {
			t.Errorf("%s's implement ran again", s.lot)
		}
	}
}

// TestStaleStopCleared: a stop request left in the channel by a run that
// ended before taking it is cleared by the next apply, which runs; a drop
// left there is taken at the next start (a request survives its sender
// and the apply it was sent to).
func TestStaleStopCleared(t *testing.T) {
	h := newHarness(t, oneSession+agentLots("a", "b"))
	ch := control.Channel{Dir: filepath.Join(h.dir, "wave.state.json.requests")}
	stop, err := ch.Send(control.Request{Kind: control.KindStop})
	if err != nil {
		t.Fatal(err)
	}
	drop, err := ch.Send(control.Request{Kind: control.KindDrop, Lots: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.runWith(context.Background(), planner.Options{}, func(o *Options) { o.Since = time.Now() })
	if err != nil {
		t.Fatal(err)
	}
	lots := h.lots()
	if lots["a"].Status != state.LotDone || lots["b"].Status != state.LotHandedBack || res.Stopped != "" {
		t.Fatalf("a %+v b %+v res %+v", lots["a"], lots["b"], res)
	}
	sa, ok, _ := ch.ReadAck(stop.ID)
	if !ok || !strings.Contains(sa.Note, "cleared") {
		t.Errorf("stop ack %+v %v", sa, ok)
	}
	if da, ok, _ := ch.ReadAck(drop.ID); !ok || len(da.Results) != 1 || !da.Results[0].Taken {
		t.Errorf("drop ack %+v %v", da, ok)
	}
	if reqs, _, _ := ch.Pending(); len(reqs) != 0 {
		t.Errorf("left pending: %+v", reqs)
	}
}

// TestAnswerLive: an answer given while the wave runs reaches the run: the
// lot that asked replays its step with the answer and is done in the same
// run.
func TestAnswerLive(t *testing.T) {
	h := newHarness(t, `wave "w" {
  max_sessions = 2
}
repo "r" {
  path = "."
  parallel = 4
}
`+agentLots("asks", "long"))
	g := newGates("long-implement")
	h.agent.script = g.script("asks")
	var mu sync.Mutex
	asked := make(chan struct{})
	res := make(chan Result, 1)
	go func() {
		r, err := h.runWith(context.Background(), planner.Options{}, func(o *Options) {
			o.Events = func(e Event) {
				if e.Kind == EvLotEnd && e.Lot == "asks" && e.Status == string(state.LotQuestion) {
					mu.Lock()
					defer mu.Unlock()
					select {
					case <-asked:
					default:
						close(asked)
					}
				}
			}
		})
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	g.wait(t, "long-implement")
	select {
	case <-asked:
	case <-time.After(2 * time.Minute):
		t.Fatal("the lot never asked")
	}
	a := h.request(control.Request{Kind: control.KindAnswer, Lot: "asks", Text: "Redis"})
	if len(a.Results) != 1 || !a.Results[0].Taken || a.Results[0].Reason != "it goes on in this run" {
		t.Fatalf("ack %+v", a)
	}
	// A lot that asks nothing is refused.
	a = h.request(control.Request{Kind: control.KindAnswer, Lot: "long", Text: "x"})
	if a.Results[0].Taken || !strings.Contains(a.Results[0].Reason, "no question waiting") {
		t.Errorf("ack %+v", a)
	}
	g.release("long-implement")
	r := <-res
	if r.Status != state.WaveDone {
		t.Fatalf("res %+v, asks %+v", r, h.lots()["asks"])
	}
	if q := h.lots()["asks"].Questions; len(q) != 1 || q[0].Answer != "Redis" {
		t.Errorf("questions %+v", q)
	}
}

// TestDroppedMidStepAfterCrash: a lot dropped while its step ran, whose
// cadence was killed before it was handed back (recorded running with
// Dropped), is handed back by the next run, never run again; its
// dependent is blocked.
func TestDroppedMidStepAfterCrash(t *testing.T) {
	h := newHarness(t, oneSession+agentLots("busy")+`lot "next" {
  repo = repo.r
  brief = "x"
  depends_on = [lot.busy]
}
`)
	store, err := state.OpenStore(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	store.UpdateLot("busy", func(l *state.Lot) {
		l.Status, l.Dropped = state.LotRunning, "after its implement step"
		l.Steps = []state.Step{{Kind: state.StepImplement, Status: state.StepRunning, Started: time.Now()}}
	})
	store.Close()
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := h.lots()["busy"]
	if l.Status != state.LotHandedBack || l.Cause != state.DroppedCause+" (after its implement step)" || l.Steps[0].Status != state.StepInterrupted {
		t.Errorf("busy = %+v", l)
	}
	if len(h.agent.spans) != 0 || res.Status != state.WaveNeedsLead {
		t.Errorf("%d sessions ran; wave %s", len(h.agent.spans), res.Status)
	}
}

// TestRequestTakenWithoutPolling: with the fallback poll set to an hour, a
// drop sent while a step runs is still taken at once: the apply looks at
// the channel when its folder changes (control.Channel.Watch), not on a
// timer.
func TestRequestTakenWithoutPolling(t *testing.T) {
	defer func(every time.Duration) { watchEvery = every }(watchEvery)
	watchEvery = time.Hour
	h := newHarness(t, oneSession+agentLots("busy"))
	g := newGates("busy-implement")
	h.agent.script = g.script("")
	done := h.runAsync()
	g.wait(t, "busy-implement")
	a := h.request(control.Request{Kind: control.KindDrop, Lots: []string{"busy"}})
	if len(a.Results) != 1 || !a.Results[0].Taken {
		t.Fatalf("ack %+v", a)
	}
	g.release("busy-implement")
	<-done
	if l := h.lots()["busy"]; l.Status != state.LotHandedBack {
		t.Fatalf("busy = %+v", l)
	}
}
