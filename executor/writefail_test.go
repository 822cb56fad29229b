package executor

import (
	"context"
	"io/fs"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

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
	full = false
	res, err = h.run(context.Background(), planner.Options{})
	if err != nil || res.Status != state.WaveDone || res.Machine != "" {
		t.Fatalf("the next run: %+v, %v; want done", res, err)
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
