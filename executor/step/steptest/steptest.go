// Package steptest is the conformance suite of step runners
// (executor/step.Runner): what any runner, on this machine or another,
// must do with a step, checked on throwaway git repositories. A runner's
// tests call Run with a function that makes the runner for a wave.
package steptest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Wave is the wave a runner under test runs steps of: its wave file
// (one repository "app", base main, in a throwaway folder) and the folder
// the suite's worktrees and logs are in.
type Wave struct {
	Config *spec.Config
	Dir    string
}

// MakeRunner makes the runner under test for w. Its agent sessions must
// do what the brief says, in BriefAgent's words (the suite's sessions
// write a file, "touch <name>", in their worktree).
type MakeRunner func(t *testing.T, w Wave) step.Runner

// Run runs every check of the suite against the runners make makes, one
// fresh wave each.
func Run(t *testing.T, make MakeRunner) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"CommandCommits", commandCommits},
		{"CommandRed", commandRed},
		{"BeginRefused", beginRefused},
		{"SessionBeginRefused", sessionBeginRefused},
		{"Timeout", timeout},
		{"GuardedRefPutBack", guardedRef},
		{"TestGate", testGate},
		{"ReadOnlyChangeReported", readOnlyChange},
		{"PrepareAndLook", prepareAndLook},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.runner = make(t, f.wave)
			f.prepare(t)
			c.run(t, f)
		})
	}
}

// fixture is one check's wave: the repository (its guard installed), the
// lot "a"'s worktree on its branch (made by the runner's Prepare), and
// the runner.
type fixture struct {
	wave   Wave
	repo   string
	wt     string
	start  string
	runner step.Runner
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	repo := filepath.Join(dir, "app")
	git(t, dir, "init", "-q", "-b", "main", repo)
	git(t, repo, "config", "user.email", "t@example.com")
	git(t, repo, "config", "user.name", "t")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	// The repository's guard, as Apply installs it for a wave.
	uninstall, err := gitint.NewGit(gittest.Env()).InstallGuard(context.Background(), repo)
	if err != nil {
		t.Fatalf("install the guard: %v", err)
	}
	t.Cleanup(func() { _ = uninstall() })
	wt := filepath.Join(dir, "worktrees", "a")
	file := filepath.Join(dir, "wave.hcl")
	hcl := fmt.Sprintf("wave %q {}\nrepo \"app\" {\n  path = %q\n}\nlot \"a\" {\n  run = \"true\"\n}\n", "w", repo)
	if err := os.WriteFile(file, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{})
	if diags.HasErrors() {
		t.Fatalf("wave file: %v", diags)
	}
	return &fixture{wave: Wave{Config: cfg, Dir: dir}, repo: repo, wt: wt, start: git(t, repo, "rev-parse", "HEAD")}
}

// prepare makes lot a's worktree through the runner (Prepare).
func (f *fixture) prepare(t *testing.T) {
	t.Helper()
	p, err := f.runner.Prepare(context.Background(), step.PrepareRequest{Lot: f.request(state.StepRun, "").Lot, Fresh: true})
	if err != nil || p.Err != "" {
		t.Fatalf("Prepare lot a: %v %s", err, p.Err)
	}
}

// request is a step of lot a of kind in its worktree.
func (f *fixture) request(kind state.StepKind, command string) step.Request {
	return step.Request{
		Lot:  step.Lot{Wave: "w", WaveID: WaveIDFor(f.wt), ID: "a", Branch: "cadence/w/a", Repos: []step.Repo{{Name: "app", Worktree: f.wt, Start: f.start}}},
		Kind: kind, Dir: f.wt, Command: command, Timeout: time.Minute,
		Log: filepath.Join(f.wave.Dir, "logs", "0-"+string(kind)+".log"), OutsideSandbox: true,
	}
}

// run runs req and returns its result and the events it emitted, in
// order. It fails the test when the runner emits an event after it
// returned.
func (f *fixture) run(t *testing.T, req step.Request) (step.Result, []step.Event) {
	t.Helper()
	events := &Recorder{}
	res, err := f.runner.RunStep(context.Background(), req, events)
	got := events.End()
	if err != nil {
		t.Fatalf("RunStep: %v", err)
	}
	return res, got
}

// Recorder is a step.Events that keeps every event in order and refuses
// (with an error) any emitted after End, and EventBegin when Refuse is set.
type Recorder struct {
	Refuse error
	mu     sync.Mutex
	events []step.Event
	ended  bool
}

// Emit implements step.Events.
func (r *Recorder) Emit(e step.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return fmt.Errorf("event %s emitted after RunStep returned", e.Kind)
	}
	r.events = append(r.events, e)
	if e.Kind == step.EventBegin {
		return r.Refuse
	}
	return nil
}

// End refuses further events and returns those emitted so far.
func (r *Recorder) End() []step.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	return r.events
}

// commandCommits: a command step's commits and heads are reported, and
// the step began and started (a pid) before its result, its process gone.
func commandCommits(t *testing.T, f *fixture) {
	res, events := f.run(t, f.request(state.StepRun, `echo hi > f && git add f && git commit -q -m "a: add f"`))
	if res.Status != state.StepOK {
		t.Fatalf("status %s: %s", res.Status, res.Cause)
	}
	head := git(t, f.wt, "rev-parse", "HEAD")
	if res.HeadBefore != f.start || res.HeadAfter != head {
		t.Errorf("heads %s..%s, want %s..%s", res.HeadBefore, res.HeadAfter, f.start, head)
	}
	if len(res.Commits) != 1 || !strings.Contains(res.Commits[0], "a: add f") {
		t.Errorf("commits %q, want the one commit a: add f", res.Commits)
	}
	pid := startedBeforeEnd(t, events)
	gone(t, pid)
}

// commandRed: a command that exits non-zero fails, saying how, with its
// last output.
func commandRed(t *testing.T, f *fixture) {
	res, _ := f.run(t, f.request(state.StepRun, "echo boom; exit 3"))
	if res.Status != state.StepFailed || !strings.Contains(res.Cause, "exit 3") || !strings.Contains(res.Output, "boom") {
		t.Errorf("status %s, cause %q, output %q; want failed, exit 3, boom", res.Status, res.Cause, res.Output)
	}
}

// beginRefused: a command whose begin the caller could not record does not
// run: the result is unstarted, nothing of the command happened, and no
// EventStarted came.
func beginRefused(t *testing.T, f *fixture) {
	marker := filepath.Join(f.wave.Dir, "ran")
	events := &Recorder{Refuse: errors.New("journal refused (test)")}
	res, err := f.runner.RunStep(context.Background(), f.request(state.StepRun, "touch "+marker), events)
	got := events.End()
	if err != nil {
		t.Fatalf("RunStep: %v", err)
	}
	if !res.Unstarted || res.Status == state.StepOK {
		t.Errorf("status %s, unstarted %v (%s); want an unstarted step", res.Status, res.Unstarted, res.Cause)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran although its begin was refused")
	}
	for _, e := range got {
		if e.Kind == step.EventStarted {
			t.Errorf("events %+v: a process started", got)
		}
	}
}

// sessionBeginRefused: the same for an agent session.
func sessionBeginRefused(t *testing.T, f *fixture) {
	req := f.request(state.StepImplement, "")
	req.Brief, req.SessionID, req.Agent = "touch stray.txt", "00000000-0000-4000-8000-000000000002", spec.BuiltinAgent
	req.Log = filepath.Join(f.wave.Dir, "logs", "0-implement")
	events := &Recorder{Refuse: errors.New("journal refused (test)")}
	res, err := f.runner.RunStep(context.Background(), req, events)
	events.End()
	if err != nil {
		t.Fatalf("RunStep: %v", err)
	}
	if !res.Unstarted || res.Status == state.StepOK {
		t.Errorf("status %s, unstarted %v (%s); want an unstarted session", res.Status, res.Unstarted, res.Cause)
	}
	if _, err := os.Stat(filepath.Join(f.wt, "stray.txt")); err == nil {
		t.Error("the session ran although its begin was refused")
	}
}

// timeout: a step past its timeout is timed out, soon, and nothing it
// started is left running.
func timeout(t *testing.T, f *fixture) {
	// The child is found by a word of its command line: its pid as the
	// command sees it may be of a PID namespace of its own (a sandbox).
	token := "steptest-timeout-" + filepath.Base(f.wave.Dir)
	req := f.request(state.StepRun, "sh -c 'sleep 60' "+token+" & wait")
	req.Timeout = 300 * time.Millisecond
	began := time.Now()
	res, _ := f.run(t, req)
	if res.Status != state.StepTimedOut {
		t.Errorf("status %s (%s), want timed-out", res.Status, res.Cause)
	}
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("the step took %s past its timeout", took)
	}
	for range 50 {
		if running(token) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("the command's child (%s) is still running after the step ended", token)
}

// running counts the live processes whose command line has word as an
// argument (/proc; zombies not counted).
func running(word string) int {
	n := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !slices.Contains(strings.Split(string(b), "\x00"), word) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
			n++
		}
	}
	return n
}

// guardedRef: a step that moves a guarded ref (the base) is an incident:
// the ref is put back, the step fails with the incident as its cause.
func guardedRef(t *testing.T, f *fixture) {
	// Written as a file, past git's hooks (the guard refuses a step's
	// update-ref of a guarded ref), outside the step sandbox (which
	// refuses the write): only the check after the step sees it.
	req := f.request(state.StepRun, `git commit -q --allow-empty -m "a: x" && git rev-parse HEAD > "$(git rev-parse --git-common-dir)/refs/heads/main"`)
	req.NoSandbox = true
	res, _ := f.run(t, req)
	if res.Status != state.StepFailed || !strings.HasPrefix(res.Cause, guard.IncidentCause) || len(res.Incidents) == 0 {
		t.Errorf("status %s, cause %q, incidents %q: want failed on an incident", res.Status, res.Cause, res.Incidents)
	}
	if main := git(t, f.repo, "rev-parse", "refs/heads/main"); main != f.start {
		t.Errorf("main at %s, not put back at %s", main, f.start)
	}
	if !strings.Contains(res.Cause, "refs/heads/main") {
		t.Errorf("the cause does not name the ref: %q", res.Cause)
	}
}

// testGate: a test gate passes the commit it ran on; one that moves HEAD
// fails, the branch put back where it found it.
func testGate(t *testing.T, f *fixture) {
	// The gate tests the lot's work, a commit beyond the start.
	if res, _ := f.run(t, f.request(state.StepRun, `git commit -q --allow-empty -m "a: work"`)); res.Status != state.StepOK {
		t.Fatalf("the work: %s %s", res.Status, res.Cause)
	}
	work := git(t, f.wt, "rev-parse", "HEAD")
	res, _ := f.run(t, f.request(state.StepTest, "true"))
	if res.Status != state.StepOK || res.HeadAfter != work {
		t.Errorf("green gate: %s %q, passed %s, want ok at %s", res.Status, res.Cause, res.HeadAfter, work)
	}
	res, _ = f.run(t, f.request(state.StepTest, `git commit -q --allow-empty -m "a: gate"`))
	if res.Status != state.StepFailed || !strings.Contains(res.Cause, "moved HEAD") || len(res.Backups) != 1 {
		t.Errorf("moving gate: %s %q, backups %q: want failed, moved HEAD, what it left kept", res.Status, res.Cause, res.Backups)
	}
	if head := git(t, f.wt, "rev-parse", "HEAD"); head != work {
		t.Errorf("after a gate that moved HEAD the branch is at %s, want %s (%s)", head, work, res.Cause)
	}
}

// readOnlyChange: a read-only session that changes the worktree is
// reported (Result.Changed), whatever its own status.
func readOnlyChange(t *testing.T, f *fixture) {
	req := f.request(state.StepReview, "")
	req.ReadOnly, req.Brief, req.SessionID, req.Agent = true, "touch stray.txt", "00000000-0000-4000-8000-000000000001", spec.BuiltinAgent
	req.Log = filepath.Join(f.wave.Dir, "logs", "0-review")
	res, events := f.run(t, req)
	if len(res.Changed) == 0 || !strings.Contains(strings.Join(res.Changed, "; "), "stray.txt") {
		t.Errorf("changed %q, want the uncommitted stray.txt (status %s %q)", res.Changed, res.Status, res.Cause)
	}
	startedBeforeEnd(t, events)
}

// prepareAndLook: Prepare makes a lot's worktree on its branch from the
// base (named in Made, its start the base's commit), finds it again
// without making it, and Look reads its HEAD, the commits since the base
// and the uncommitted files; RemoveWorktrees removes a clean worktree.
func prepareAndLook(t *testing.T, f *fixture) {
	ctx := context.Background()
	wt := filepath.Join(f.wave.Dir, "worktrees", "b")
	lot := step.Lot{Wave: "w", WaveID: WaveIDFor(f.wt), ID: "b", Branch: "cadence/w/b", Repos: []step.Repo{{Name: "app", Worktree: wt}}}
	p, err := f.runner.Prepare(ctx, step.PrepareRequest{Lot: lot, Fresh: true})
	if err != nil || p.Err != "" {
		t.Fatalf("Prepare: %v %s", err, p.Err)
	}
	if len(p.Made) != 1 || p.Made[0] != "app" || p.Starts["app"] != f.start {
		t.Errorf("prepared %+v, want app made, started at %s", p, f.start)
	}
	if b := git(t, wt, "symbolic-ref", "HEAD"); b != "refs/heads/cadence/w/b" {
		t.Errorf("the worktree is on %s", b)
	}
	if p, err := f.runner.Prepare(ctx, step.PrepareRequest{Lot: lot}); err != nil || p.Err != "" || len(p.Made) != 0 {
		t.Errorf("Prepare again: %+v %v, want found, not made", p, err)
	}
	git(t, wt, "commit", "-q", "--allow-empty", "-m", "b: one")
	if err := os.WriteFile(filepath.Join(wt, "new.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ls, err := f.runner.Look(ctx, step.LookRequest{Lot: lot, From: map[string]string{"app": step.RepoBase}, Commits: true, Dirty: true})
	if err != nil || len(ls) != 1 {
		t.Fatalf("Look: %+v %v", ls, err)
	}
	l := ls[0]
	if l.Err != "" || l.Head != git(t, wt, "rev-parse", "HEAD") || len(l.Commits) != 1 || !strings.Contains(l.Commits[0], "b: one") || len(l.Dirty) != 1 || !strings.Contains(l.Dirty[0], "new.txt") {
		t.Errorf("looked %+v, want the head, the commit b: one, new.txt uncommitted", l)
	}
	if err := os.Remove(filepath.Join(wt, "new.txt")); err != nil {
		t.Fatal(err)
	}
	if err := f.runner.RemoveWorktrees(ctx, lot); err != nil {
		t.Errorf("RemoveWorktrees: %v", err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
}

// startedBeforeEnd checks that the events began with EventBegin, then
// EventStarted with a pid, and returns the pid.
func startedBeforeEnd(t *testing.T, events []step.Event) int {
	t.Helper()
	if len(events) < 2 || events[0].Kind != step.EventBegin || events[1].Kind != step.EventStarted || events[1].PID <= 0 {
		t.Fatalf("events %+v: want begin, then started with a pid", events)
	}
	return events[1].PID
}

// gone fails the test unless process pid is gone within a few seconds.
func gone(t *testing.T, pid int) {
	t.Helper()
	for range 50 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("process %d is still running after the step ended", pid)
}

// git runs git in dir and returns its output, trimmed.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitint.NewGit(gittest.Env()).Run(context.Background(), dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out)
}

// BriefAgent is an agent for the suite's sessions: it does what the brief
// says, "touch <name>" (a file in the session's folder), reports started
// with a pid of its own (the test process's), and ends ok with a report.
type BriefAgent struct{}

// Run does what s.Brief says.
func (BriefAgent) Run(_ context.Context, s agent.Session) agent.Outcome {
	if s.Started != nil {
		s.Started(os.Getpid())
	}
	if name, ok := strings.CutPrefix(s.Brief, "touch "); ok {
		if err := os.WriteFile(filepath.Join(s.Dir, name), nil, 0o644); err != nil {
			return agent.Outcome{Status: state.StepFailed, Cause: err.Error()}
		}
	}
	return agent.Outcome{Status: state.StepOK, Report: &agent.Report{Summary: "done", Verdict: "fine"}}
}

// WaveIDFor is a wave id (step.Lot.WaveID) of its own for a test's
// folder dir: the wave's mark on every step process, which cadence ends
// by (proc.EndMarked), so tests running at once in other packages and
// processes must never share one.
func WaveIDFor(dir string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(dir))
	return fmt.Sprintf("test-%d-%x", os.Getpid(), h.Sum64())
}
