package executor

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/control"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// TestSessionWriteErrorStopsTheWave: a session whose files could not be
// written (Outcome.WriteErr, ENOSPC) is a machine error: its step and lot
// are recorded interrupted, the lot queued after it never starts, and the
// run ends with "disk full: <file>: no space left on device (<free> free
// on <mount>)"; the state stays readable, and the next run resumes and
// finishes both lots.
func TestSessionWriteErrorStopsTheWave(t *testing.T) {
	h := newHarness(t, "wave \"w\" {\n  max_sessions = 1\n}\nrepo \"r\" {\n  path = \".\"\n}\n"+agentLots("a")+
		"lot \"b\" {\n  repo = repo.r\n  brief = \"do b\"\n  depends_on = [lot.a]\n}\n")
	full := true
	var file string
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if full && s.Lot == "a" {
			file = s.LogPrefix + ".json"
			err := &fs.PathError{Op: "write", Path: file, Err: syscall.ENOSPC}
			return Outcome{Status: state.StepInterrupted, Cause: "the session's files could not be written", WriteErr: err, Usage: state.Usage{Input: 7}}, 0
		}
		return Outcome{Status: state.StepOK, Usage: state.Usage{Input: 1}, Report: &Report{Summary: "ok", Status: "done"}}, 0
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^implement step: disk full: ` + regexp.QuoteMeta(file) + `: no space left on device \([0-9.]+ [KMGTPE]?i?B free on /\S*\)$`)
	if !want.MatchString(res.Machine) {
		t.Fatalf("Result.Machine = %q, want %s", res.Machine, want)
	}
	lots := h.lots()
	a := lots["a"]
	if a.Status != state.LotInterrupted || len(a.Steps) != 1 || a.Steps[0].Status != state.StepInterrupted || !want.MatchString(a.Steps[0].Cause) {
		t.Fatalf("lot a: %s (%s), steps %+v; want interrupted by the full disk", a.Status, a.Cause, a.Steps)
	}
	if a.Steps[0].Usage.Input != 7 {
		t.Errorf("the interrupted session's usage was not recorded: %+v", a.Steps[0].Usage)
	}
	if b := lots["b"]; b != nil && len(b.Steps) > 0 {
		t.Fatalf("lot b started after the machine error: %+v", b.Steps)
	}
	if len(h.agent.spans) != 1 {
		t.Errorf("%d sessions ran, want the one whose files failed (never retried)", len(h.agent.spans))
	}
	if st := h.state(); st.Stopped != res.Machine {
		t.Errorf("the state's stopped is %q, want the machine error %q", st.Stopped, res.Machine)
	}
	full = false
	res, err = h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone || res.Machine != "" {
		t.Fatalf("the next run: %+v, %v; want done", res, err)
	}
	if st := h.state(); st.Stopped != "" {
		t.Errorf("the state's stopped is %q after an apply that ended done", st.Stopped)
	}
}

// TestSessionOutputCutIsRecorded: a session whose files the log_limit cut
// (Outcome.OutputCut) has its step's cause say so, with the bytes
// dropped and the limit, and the step records them.
func TestSessionOutputCutIsRecorded(t *testing.T) {
	h := newHarness(t, "wave \"w\" {}\nrepo \"r\" {\n  path = \".\"\n}\nlot \"a\" {\n  repo = repo.r\n  brief = \"do a\"\n  log_limit = \"64KiB\"\n}\n")
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if s.LogLimit != 64<<10 {
			t.Errorf("session %s: LogLimit %d, want the lot's 65536", s.Step, s.LogLimit)
		}
		out := Outcome{Status: state.StepOK, Usage: state.Usage{Input: 1}, Report: &Report{Summary: "ok", Status: "done", Verdict: "fine"}}
		if s.Step == state.StepImplement {
			out.OutputCut = 3 << 20
		}
		return out, 0
	}
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	a := h.lots()["a"]
	s := a.Steps[0]
	if s.Kind != state.StepImplement || s.OutputCut != 3<<20 || !strings.Contains(s.Cause, "session output cut: 3 MiB dropped (log_limit 64KiB)") {
		t.Fatalf("implement step: cut %d, cause %q; want 3 MiB cut said in the cause", s.OutputCut, s.Cause)
	}
}

// TestAckWriteErrorStopsTheWave: an acknowledgement of a request that
// cannot be written (ENOSPC, through the ackRequest seam) is a machine
// error: the wave stops with the path, the error and the free space, the
// acknowledgement is tried once (never again each time the watcher looks),
// and the request stays in the channel for the next apply, which takes it
// (its effect is idempotent) and acknowledges it.
func TestAckWriteErrorStopsTheWave(t *testing.T) {
	h := newHarness(t, "wave \"w\" {\n  max_sessions = 1\n}\nrepo \"r\" {\n  path = \".\"\n}\n"+agentLots("a")+
		"lot \"b\" {\n  repo = repo.r\n  brief = \"do b\"\n  depends_on = [lot.a]\n}\n")
	ch := control.Channel{Dir: layout.New(filepath.Join(h.dir, "wave.hcl"), "w", filepath.Join(h.dir, "home")).Requests()}
	var acks atomic.Int32
	full := true
	real := ackRequest
	ackRequest = func(c control.Channel, r control.Request, a control.Ack) error {
		acks.Add(1)
		if full {
			return fmt.Errorf("write %s: %w", filepath.Join(c.Dir, r.ID+".ack.json"), &fs.PathError{Op: "write", Path: filepath.Join(c.Dir, ".x.tmp-1"), Err: syscall.ENOSPC})
		}
		return real(c, r, a)
	}
	t.Cleanup(func() { ackRequest = real })
	var sent control.Request
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if s.Lot == "a" && full {
			var err error
			if sent, err = ch.Send(control.Request{Kind: control.KindDrop, Lots: []string{"b"}}); err != nil {
				t.Error(err)
			}
			return Outcome{Status: state.StepOK, Usage: state.Usage{Input: 1}, Report: &Report{Summary: "ok", Status: "done"}}, 2 * time.Second
		}
		return Outcome{Status: state.StepOK, Usage: state.Usage{Input: 1}, Report: &Report{Summary: "ok", Status: "done"}}, 0
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^request channel: disk full: ` + regexp.QuoteMeta(ch.Dir) + `/\S+: no space left on device \([0-9.]+ [KMGTPE]?i?B free on /\S*\)$`)
	if !want.MatchString(res.Machine) {
		t.Fatalf("Result.Machine = %q, want %s", res.Machine, want)
	}
	if n := acks.Load(); n != 1 {
		t.Errorf("the acknowledgement was tried %d times, want once", n)
	}
	if reqs, _, _ := ch.Pending(); len(reqs) != 1 || reqs[0].ID != sent.ID {
		t.Fatalf("pending requests after the failed acknowledgement: %+v, want the drop", reqs)
	}
	full = false
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	if reqs, _, _ := ch.Pending(); len(reqs) != 0 {
		t.Errorf("the next apply left the request pending: %+v", reqs)
	}
	if b := h.lots()["b"]; b == nil || b.Status != state.LotHandedBack {
		t.Errorf("lot b after the drop: %+v, want handed back", b)
	}
}
