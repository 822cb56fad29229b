// Package agenttest is the conformance suite of agent adapters: Run puts
// any agent.Adapter through the same sessions (commit and report, ask,
// give no report, hit a usage limit, meet an overloaded API, be stopped,
// write more than the log limit, be refused a write in a read-only
// session, be recounted) and checks the outcome each must give, as
// Terraform's internal/backend/testing.go runs every backend through the
// same checks. An adapter's tests call Run with a Harness that scripts its
// CLI (or a stand-in); a check the adapter cannot meet is skipped, saying
// why (Harness.Lacks), never silently. Lacks names behaviours the CLI
// cannot play and capabilities the adapter does not have (CountTokens,
// Recount), each on its own: an adapter that commits but spends no tokens
// lacks CountTokens only, and its commit check still runs.
package agenttest

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/boundedlog"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Behaviour is what the suite asks a session to do; the harness makes the
// adapter's CLI do it (Harness.Script).
type Behaviour string

const (
	// Commit: commit one new file in the session's folder, then report
	// done (a write step's report).
	Commit Behaviour = "commit"
	// Ask: report done with at least one question for the lead.
	Ask Behaviour = "ask"
	// NoReport: end without the structured report, and again when the
	// adapter asks for the report alone (its one formatting retry).
	NoReport Behaviour = "no-report"
	// UsageLimit: end on a usage limit that resets at Harness.ResetAt.
	UsageLimit Behaviour = "usage-limit"
	// Overloaded: end on the API answering overloaded (HTTP 529), every
	// retry included.
	Overloaded Behaviour = "overloaded"
	// Hang: never end by itself (the suite cancels it).
	Hang Behaviour = "hang"
	// Chatty: print far more than the session's log limit on its output,
	// then report done.
	Chatty Behaviour = "chatty"
	// WriteFile: try to write the file Written in the session's folder,
	// then give a review's report (the session is read-only).
	WriteFile Behaviour = "write-file"
)

// Capabilities of an adapter the suite checks where the adapter has them;
// Harness.Lacks names the ones it does not, as it names behaviours.
const (
	// CountTokens: a session's outcome counts the tokens it spent (and
	// Recount's, when the adapter recounts).
	CountTokens Behaviour = "count-tokens"
	// Recount: Adapter.Recount finds a session that ran, from what it
	// left, and finds none that never ran.
	Recount Behaviour = "recount"
)

// Written is the file a WriteFile session tries to write.
const Written = "written-by-a-read-only-session.txt"

// Harness is what Run needs of an adapter and its CLI.
type Harness struct {
	// Adapter is the adapter under test.
	Adapter agent.Adapter
	// Agent is the agent its sessions run with: of the adapter's kind,
	// its settings decoded (spec.Agent.Settings).
	Agent *spec.Agent
	// Host is given to every session: Command (the CLI or its stand-in)
	// and Env (the environment it runs with: PATH, HOME, a git identity,
	// what points it at a fake API). The suite sets NewSessionID.
	Host agent.Host
	// Script makes session s do b: it edits s (its Brief, its Env) so
	// that the CLI plays b. Required.
	Script func(t *testing.T, b Behaviour, s *agent.Session)
	// Runs counts the processes of the CLI session s started (the run and
	// its retries); nil: not counted (the formatting retry is then only
	// seen in the outcome).
	Runs func(t *testing.T, s agent.Session) int
	// Lacks are the behaviours the adapter or its CLI cannot play and the
	// capabilities it does not have, each with why: a check that needs one
	// is skipped with that reason; a check that only looks at a
	// capability's result (the commit check's usage) leaves that part out.
	Lacks map[Behaviour]string
	// ResetAt is when the scripted usage limit resets.
	ResetAt time.Time
	// Timeout bounds each session (0: two minutes).
	Timeout time.Duration
}

// Run runs every check of the suite against h, each as a subtest.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Adapter == nil || h.Agent == nil || h.Script == nil {
		t.Fatal("agenttest: the harness needs an Adapter, an Agent and a Script")
	}
	if h.Agent.Kind != h.Adapter.Kind() {
		t.Fatalf("agenttest: agent of kind %q for an adapter of kind %q", h.Agent.Kind, h.Adapter.Kind())
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range c.needs {
				if why, ok := h.Lacks[n]; ok {
					t.Skipf("the harness lacks %s: %s", n, why)
				}
			}
			c.run(t, h)
		})
	}
}

// counts reports whether the adapter counts tokens (Lacks no CountTokens).
func (h Harness) counts() bool {
	_, lacks := h.Lacks[CountTokens]
	return !lacks
}

type check struct {
	name  string
	needs []Behaviour
	run   func(t *testing.T, h Harness)
}

var checks = []check{
	{"commit reports ok with usage and report", []Behaviour{Commit}, checkCommit},
	{"questions reach the report", []Behaviour{Ask}, checkAsk},
	{"no report after the formatting retry", []Behaviour{NoReport}, checkNoReport},
	{"usage limit is quota with its reset", []Behaviour{UsageLimit}, checkUsageLimit},
	{"overloaded API is recognised", []Behaviour{Overloaded}, checkOverloaded},
	{"cancel interrupts and leaves nothing running", []Behaviour{Hang}, checkCancel},
	{"log files are written and bounded", []Behaviour{Chatty}, checkLogs},
	{"read-only session is refused writes", []Behaviour{WriteFile}, checkReadOnly},
	{"recount after the fact", []Behaviour{Commit, Recount}, checkRecount},
}

// run is one session of behaviour b in a fresh repository, with the
// harness's host; it returns the session as run, its outcome and the
// pids the adapter reported started.
func run(t *testing.T, h Harness, b Behaviour, step state.StepKind, edit func(*agent.Session)) (agent.Session, agent.Outcome, []int) {
	t.Helper()
	dir := gittest.NewRepo(t, map[string]string{"README.md": "conformance\n"})
	logs := t.TempDir()
	info, _ := state.Info(step)
	s := agent.Session{
		Wave: "conformance", Lot: "a", WaveID: "w-" + newID(t)[:8], Step: step, Pass: 0,
		Agent: h.Agent, Model: "sonnet", Dir: dir, Brief: "Do the work.", ReadOnly: info.ReadOnly,
		ReportSchema: info.ReportSchema, SessionID: newID(t), Timeout: 0,
		LogPrefix: filepath.Join(logs, "1-"+string(step)), LogLimit: 1 << 20,
	}
	var pids []int
	s.Started = func(pid int) { pids = append(pids, pid) }
	if edit != nil {
		edit(&s)
	}
	h.Script(t, b, &s)
	host := h.Host
	host.NewSessionID = func() string { return newID(t) }
	timeout := h.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := h.Adapter.Run(ctx, s, host)
	return s, out, pids
}

func checkCommit(t *testing.T, h Harness) {
	var before string
	s, out, pids := run(t, h, Commit, state.StepImplement, func(s *agent.Session) {
		before = gittest.Git(t, s.Dir, "rev-parse", "HEAD")
	})
	if out.Status != state.StepOK || out.Report == nil || out.Report.Status != "done" || out.Report.Summary == "" {
		t.Fatalf("outcome %s (%s), report %+v: want ok with a done report", out.Status, out.Cause, out.Report)
	}
	if h.counts() && out.Usage.Counted() <= 0 {
		t.Errorf("usage %+v: want the session's tokens", out.Usage)
	}
	if len(pids) == 0 {
		t.Error("Started was never called")
	}
	if n := gittest.Git(t, s.Dir, "rev-list", "--count", before+"..HEAD"); n != "1" {
		t.Errorf("%s commits after the session's start, want 1", n)
	}
}

func checkAsk(t *testing.T, h Harness) {
	_, out, _ := run(t, h, Ask, state.StepImplement, nil)
	if out.Status != state.StepOK || out.Report == nil || len(out.Report.Questions) == 0 {
		t.Fatalf("outcome %s (%s), report %+v: want ok with questions", out.Status, out.Cause, out.Report)
	}
}

func checkNoReport(t *testing.T, h Harness) {
	s, out, _ := run(t, h, NoReport, state.StepImplement, nil)
	if out.Status != state.StepFailed || out.Cause != agent.CauseNoReport || out.Report != nil {
		t.Fatalf("outcome %s (%q), report %+v: want failed, %q", out.Status, out.Cause, out.Report, agent.CauseNoReport)
	}
	if h.Runs != nil {
		if n := h.Runs(t, s); n != 2 {
			t.Errorf("the CLI ran %d time(s): want the session and its one formatting retry", n)
		}
	}
}

func checkUsageLimit(t *testing.T, h Harness) {
	_, out, _ := run(t, h, UsageLimit, state.StepImplement, nil)
	if out.Status != state.StepQuota {
		t.Fatalf("outcome %s (%s): want quota", out.Status, out.Cause)
	}
	if out.ResetAt == nil || out.ResetAt.Sub(h.ResetAt).Abs() > time.Minute {
		t.Errorf("reset at %v, want about %v", out.ResetAt, h.ResetAt)
	}
}

func checkOverloaded(t *testing.T, h Harness) {
	_, out, _ := run(t, h, Overloaded, state.StepImplement, nil)
	if out.Status != state.StepFailed || out.API != agent.APIOverloaded || !out.API.Transient() {
		t.Fatalf("outcome %s (%s), API failure %q: want failed, overloaded", out.Status, out.Cause, out.API)
	}
}

func checkCancel(t *testing.T, h Harness) {
	dir := gittest.NewRepo(t, map[string]string{"README.md": "conformance\n"})
	started := make(chan int, 4)
	s := agent.Session{Wave: "conformance", Lot: "a", Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema(),
		Agent: h.Agent, Model: "sonnet", Dir: dir, Brief: "Do the work.", SessionID: newID(t),
		LogPrefix: filepath.Join(t.TempDir(), "1-implement"), LogLimit: 1 << 20,
		Started: func(pid int) { started <- pid }}
	h.Script(t, Hang, &s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan agent.Outcome, 1)
	go func() { done <- h.Adapter.Run(ctx, s, h.Host) }()
	var pid int
	select {
	case pid = <-started:
	case out := <-done:
		t.Fatalf("the session ended by itself: %s (%s)", out.Status, out.Cause)
	case <-time.After(time.Minute):
		t.Fatal("the session did not start within a minute")
	}
	time.Sleep(300 * time.Millisecond) // let it get going
	cancel()
	var out agent.Outcome
	select {
	case out = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the session did not end within a minute of its cancel")
	}
	if out.Status != state.StepInterrupted {
		t.Errorf("outcome %s (%s): want interrupted", out.Status, out.Cause)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the session's process %d is still there (kill 0: %v)", pid, err)
	}
	if n := h.Adapter.KillLeftovers(s.SessionID); n != 0 {
		t.Errorf("KillLeftovers found %d process(es) of the session after it ended", n)
	}
}

func checkLogs(t *testing.T, h Harness) {
	const limit = 4 << 10
	s, out, _ := run(t, h, Chatty, state.StepImplement, func(s *agent.Session) { s.LogLimit = limit })
	if out.Status != state.StepOK || out.Report == nil {
		t.Fatalf("outcome %s (%s), report %+v: want ok, the report read from the output as it came", out.Status, out.Cause, out.Report)
	}
	for _, ext := range []string{".json", ".err"} {
		fi, err := os.Stat(s.LogPrefix + ext)
		if err != nil {
			t.Errorf("log file: %v", err)
			continue
		}
		if max := int64(limit + len(boundedlog.Marker(1<<40))); fi.Size() > max {
			t.Errorf("%s is %d bytes, over the limit %d and its marker line", filepath.Base(s.LogPrefix+ext), fi.Size(), limit)
		}
	}
	if out.OutputCut <= 0 {
		t.Errorf("OutputCut %d: the session printed more than its limit", out.OutputCut)
	}
	if b, _ := os.ReadFile(s.LogPrefix + ".json"); !strings.Contains(string(b), "cadence dropped") {
		t.Error("the output log does not say what was dropped")
	}
}

func checkReadOnly(t *testing.T, h Harness) {
	s, out, _ := run(t, h, WriteFile, state.StepReview, nil)
	if !s.ReadOnly {
		t.Fatal("a review session is not read-only")
	}
	if _, err := os.Stat(filepath.Join(s.Dir, Written)); err == nil {
		t.Errorf("the read-only session wrote %s", Written)
	}
	if len(out.Denials) == 0 {
		t.Errorf("outcome %s (%s): no denial recorded of the write", out.Status, out.Cause)
	}
}

func checkRecount(t *testing.T, h Harness) {
	s, out, _ := run(t, h, Commit, state.StepImplement, nil)
	if out.Status != state.StepOK {
		t.Fatalf("outcome %s (%s): want ok", out.Status, out.Cause)
	}
	spent, ok := h.Adapter.Recount(s.SessionID, s.Dir, s.LogPrefix, h.Host.Env)
	if !ok || (h.counts() && spent.Usage.Counted() <= 0) {
		t.Fatalf("Recount = %+v, %v: want the session found, with its tokens", spent, ok)
	}
	if spent.Usage.Counted() > out.Usage.Counted() {
		t.Errorf("recounted %+v, more than the session's own %+v", spent.Usage, out.Usage)
	}
	if _, ok := h.Adapter.Recount(newID(t), s.Dir, filepath.Join(t.TempDir(), "none"), h.Host.Env); ok {
		t.Error("Recount found a session that never ran")
	}
}

// newID returns a random UUID (version 4).
func newID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	var sb strings.Builder
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			sb.WriteByte('-')
		}
		sb.WriteByte(hex[c>>4])
		sb.WriteByte(hex[c&0xf])
	}
	return sb.String()
}
