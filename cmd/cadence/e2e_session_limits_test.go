//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
)

// needCgroup skips the test where this machine cannot enforce the limit k
// of l (no cgroup with its controller cadence may make), saying why.
func needCgroup(t *testing.T, k proc.Limit, l proc.Limits) {
	t.Helper()
	for _, e := range proc.Enforced(l) {
		if e.Limit == k && e.Mechanism == proc.MechanismNone {
			t.Skipf("the %s limit cannot be enforced here: %s", k, e.Why)
		}
	}
}

// cgroupProbe is a Bash call that prints the step cgroups' process count
// (pids.current) where the sandbox shows /sys.
const cgroupProbe = `for f in $(find /sys/fs/cgroup -path '*/cadence-step-*' -name pids.current 2>/dev/null); do echo "$f $(cat "$f")"; done; echo probed`

// TestE2ESessionLimits: a lot's limits bound its agent sessions' trees.
// Lot a's implement session runs a Bash call that forks 60 sleeps under
// processes = 30: the session is ended with its whole tree, and the lot
// fails with the limit named. Lot b's sessions run under roomy limits
// (the CLI, its sandbox and its tools, for the whole session) and the lot
// is done: the limits and the supervisor's look for processes that left
// the step's cgroup do not break an ordinary session.
func TestE2ESessionLimits(t *testing.T) {
	t.Parallel()
	needCgroup(t, proc.LimitProcesses, proc.Limits{Processes: 30})
	bomb := `i=0; while [ $i -lt 60 ]; do sleep 10 & i=$((i+1)); done; wait; echo survived`
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {fakeapi.Bash(bomb), writeDone("forked")},
		"b-implement0": {fakeapi.Bash(cgroupProbe), commit("f.txt", "f"), writeDone("added f.txt")},
		"b-review0":    {review("conform")},
	}, waveOpts{Lot: `  limits = { processes = 30 }`, More: `
lot "b" {
  repo   = repo.app
  brief  = "Add f.txt."
  limits = { processes = 256, memory = "4GiB" }
}
`})
	r := e.apply()
	r.wantCode(t, 1)
	r.wantOut(t, `a failed: implement session failed: session reached its processes limit \(processes = 30\): its processes were ended`, `b done`)
	st := e.state()
	a, b := e.lot(st, "a"), e.lot(st, "b")
	impl := stepsOf(a, state.StepImplement)
	if a.Status != state.LotFailed || len(impl) != 1 || impl[0].Status != state.StepFailed ||
		!strings.Contains(impl[0].Cause, "reached its processes limit (processes = 30)") {
		t.Errorf("lot a %s (%s), steps %s", a.Status, a.Cause, steps(a))
	}
	if reqs := e.turns("a-implement0"); len(reqs) > 1 {
		t.Errorf("the session went on after its fork bomb: %d requests", len(reqs))
	}
	if b.Status != state.LotDone {
		t.Errorf("lot b %s (%s), steps %s", b.Status, b.Cause, steps(b))
	}
	if reqs := e.turns("b-implement0"); len(reqs) > 1 {
		tr := reqs[1].ToolResults()
		t.Logf("lot b's probe: %s", tr[len(tr)-1].Text)
	}
	var sessions []string
	for _, l := range []*state.Lot{a, b} {
		for _, s := range l.Steps {
			if s.SessionID != "" {
				sessions = append(sessions, s.SessionID)
			}
		}
	}
	e.noneLeft(sessions...)
}
