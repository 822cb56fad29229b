package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/remote/transport"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const branch = "cadence/w/a"

// fixture is a lead with one repository and lot a's worktree on its
// branch, a queue on an embedded engine, and the remote runner.
type fixture struct {
	repo, wt string
	q        *queue.Queue
	tr       *transport.Transport
	r        *Runner
	local    *countingLocal
}

// countingLocal stands for step.Local: it counts the steps it is given.
type countingLocal struct {
	step.Runner
	mu    sync.Mutex
	kinds []state.StepKind
}

func (c *countingLocal) RunStep(_ context.Context, req step.Request, _ step.Events) (step.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kinds = append(c.kinds, req.Kind)
	return step.Result{Status: state.StepOK}, nil
}

func newFixture(t *testing.T, remote string) *fixture {
	t.Helper()
	repo := gittest.NewRepo(t, map[string]string{"README.md": "# app\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", branch, wt, "main")
	src := "wave \"w\" {}\nexecutor \"nats\" {\n  url = \"nats://127.0.0.1:4222\"\n  queue = \"team\"\n  remote = [" + remote + "]\n}\n" +
		"repo \"app\" {\n  path = \"" + repo + "\"\n  test = \"true\"\n}\nlot \"a\" {\n  repo = repo.app\n  brief = \"b\"\n  env = { WAVE_VAR = \"1\" }\n}\n"
	cfg, diags := spec.NewLoader().LoadBytes([]byte(src), filepath.Join(t.TempDir(), "wave.hcl"), spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := enginetest.Start(t)
	nc, err := nats.Connect(e.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	q, err := queue.CreateQueue(ctx(t), js, "team", 2, 2*time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr := transport.New(append(gittest.Env(), "HOME="+t.TempDir()))
	local := &countingLocal{}
	r := New(Options{Local: local, Config: cfg, Queue: q, Transport: tr, Cache: t.TempDir(), Poll: 50 * time.Millisecond, CancelWait: 20 * time.Second})
	return &fixture{repo: repo, wt: wt, q: q, tr: tr, r: r, local: local}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// serve runs a worker of the queue with handler h until the test ends.
func (f *fixture) serve(t *testing.T, h queue.Handler) {
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.q.Serve(c, queue.WorkerOptions{ID: "build-1", Slots: 1, Handler: h})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// checkout makes the worker's clone of the job's first repository.
func (f *fixture) checkout(t *testing.T, c context.Context, job queue.Job) (Work, string) {
	var w Work
	if err := json.Unmarshal(job.Request, &w); err != nil {
		t.Error(err)
	}
	dir := t.TempDir()
	files := map[string]string{}
	for _, name := range []string{w.Repos[0].Base, w.Repos[0].Lot} {
		var buf bytes.Buffer
		if err := f.q.GetBundle(c, name, &buf, DefaultMaxBundle); err != nil {
			t.Error(err)
		}
		files[name] = filepath.Join(dir, name+".bundle")
		os.WriteFile(files[name], buf.Bytes(), 0o644)
	}
	clone := filepath.Join(dir, "clone")
	if _, err := f.tr.Checkout(c, clone, files[w.Repos[0].Base], files[w.Repos[0].Lot], branch); err != nil {
		t.Error(err)
	}
	return w, clone
}

func (f *fixture) putResult(t *testing.T, c context.Context, w Work, file string) {
	fh, err := os.Open(file)
	if err != nil {
		t.Error(err)
		return
	}
	defer fh.Close()
	if err := f.q.PutBundle(c, w.Repos[0].Result, fh, DefaultMaxBundle); err != nil {
		t.Error(err)
	}
}

func request(f *fixture, kind state.StepKind) step.Request {
	return step.Request{Lot: step.Lot{Wave: "w", WaveID: "id1", ID: "a", Branch: branch, Repos: []step.Repo{{Name: "app", Worktree: f.wt}}},
		Kind: kind, Dir: f.wt, Log: filepath.Join(filepath.Dir(f.wt), "logs", "a.log"),
		Env: []string{"ANTHROPIC_API_KEY=secret-key", "WAVE_VAR=1", "HOME=/home/lead"}}
}

type recorder struct {
	mu  sync.Mutex
	evs []step.Event
}

func (r *recorder) Emit(e step.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
	return nil
}

// TestRemoteSessionRoundTrip: an implement step runs on the worker, which
// gets the lot's repository as bundles, the request without the lead's
// paths and environment (the wave's variable only), commits; the lead
// accepts its bundle into the lot's branch and worktree and returns the
// worker's result, with the worker told as EventStarted. The test gate,
// not remote here, stays local.
func TestRemoteSessionRoundTrip(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	var seen Work
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		w, clone := f.checkout(t, c, job)
		seen = w
		p.Tokens(1500)
		time.Sleep(200 * time.Millisecond) // two polls see the owner
		head := gittest.Commit(t, clone, "a: the feature", map[string]string{"f.txt": "x\n"})
		out := filepath.Join(t.TempDir(), "result.bundle")
		if err := f.tr.ResultBundle(c, clone, branch, w.Repos[0].Head, out, DefaultMaxBundle); err != nil {
			t.Error(err)
		}
		f.putResult(t, c, w, out)
		res, _ := json.Marshal(step.Result{Status: state.StepOK, HeadAfter: head, Commits: []string{head + " a: the feature"}})
		return queue.Result{Result: res, Bundles: []string{w.Repos[0].Result}}, nil
	})
	rec := &recorder{}
	res, err := f.r.RunStep(ctx(t), request(f, state.StepImplement), rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != state.StepOK || res.Incident != "" || len(res.Commits) != 1 {
		t.Fatalf("result %+v", res)
	}
	if got := gittest.Git(t, f.wt, "log", "-1", "--format=%s", "HEAD"); strings.TrimSpace(got) != "a: the feature" {
		t.Errorf("lot worktree HEAD %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.wt, "f.txt")); err != nil {
		t.Errorf("worktree not updated: %v", err)
	}
	if seen.Request.Dir != "" || seen.Request.Log != "" || seen.Request.Repos[0].Worktree != "" || seen.DirRepo != "app" {
		t.Errorf("lead paths in the job: %+v", seen)
	}
	if strings.Join(seen.Request.Env, ",") != "WAVE_VAR=1" {
		t.Errorf("job env %q: want the wave's variable only", seen.Request.Env)
	}
	if len(rec.evs) < 2 || rec.evs[0].Kind != step.EventBegin || rec.evs[1].Kind != step.EventStarted || rec.evs[1].Worker != "build-1" {
		t.Errorf("events %+v", rec.evs)
	}
	if _, err := f.r.RunStep(ctx(t), request(f, state.StepTest), rec); err != nil || len(f.local.kinds) != 1 || f.local.kinds[0] != state.StepTest {
		t.Errorf("test gate: %v, local ran %v", err, f.local.kinds)
	}
}

// TestRemoteHostileResultRefused: a worker's bundle that names another
// ref (refs/heads/main) is refused: an incident that holds the lot, the
// lot's branch and the base unchanged, the bundle kept beside the log.
func TestRemoteHostileResultRefused(t *testing.T) {
	f := newFixture(t, `"sessions", "tests"`)
	mainBefore := gittest.Git(t, f.repo, "rev-parse", "main")
	lotBefore := gittest.Git(t, f.repo, "rev-parse", branch)
	f.serve(t, func(c context.Context, job queue.Job, _ *queue.Progress) (queue.Result, error) {
		w, clone := f.checkout(t, c, job)
		gittest.Git(t, clone, "branch", "-f", "main", "HEAD")
		gittest.Commit(t, clone, "evil", map[string]string{"evil.txt": "x\n"})
		out := filepath.Join(t.TempDir(), "evil.bundle")
		gittest.Git(t, clone, "bundle", "create", out, "refs/heads/main", "refs/heads/"+branch)
		f.putResult(t, c, w, out)
		res, _ := json.Marshal(step.Result{Status: state.StepOK})
		return queue.Result{Result: res, Bundles: []string{w.Repos[0].Result}}, nil
	})
	req := request(f, state.StepImplement)
	res, err := f.r.RunStep(ctx(t), req, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Incident == "" || res.Held == "" || res.Status != state.StepFailed || !strings.Contains(res.Cause, "refused") {
		t.Fatalf("result %+v: want a refused incident", res)
	}
	if gittest.Git(t, f.repo, "rev-parse", "main") != mainBefore || gittest.Git(t, f.repo, "rev-parse", branch) != lotBefore {
		t.Error("a refused bundle moved a branch")
	}
	kept, _ := filepath.Glob(filepath.Join(filepath.Dir(req.Log), "*.bundle"))
	if len(kept) != 1 {
		t.Errorf("kept bundles %v, want the refused one", kept)
	}
}

// TestRemoteCancel: the step's context ending (SIGINT, drop -now, a spent
// budget) cancels the run on its worker, whose handler's context ends; the
// step returns within a bounded wait, interrupted or as the worker said.
func TestRemoteCancel(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	started := make(chan struct{})
	f.serve(t, func(c context.Context, job queue.Job, _ *queue.Progress) (queue.Result, error) {
		close(started)
		select {
		case <-c.Done():
		case <-time.After(time.Minute):
			t.Error("the handler was not canceled within a minute")
		}
		res, _ := json.Marshal(step.Result{Status: state.StepCut, Cause: "canceled"})
		return queue.Result{Result: res}, nil
	})
	c, cancel := context.WithCancel(ctx(t))
	go func() {
		<-started
		cancel()
	}()
	begun := time.Now()
	res, err := f.r.RunStep(c, request(f, state.StepImplement), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != state.StepCut && res.Status != state.StepInterrupted {
		t.Errorf("result %+v: want cut or interrupted", res)
	}
	if d := time.Since(begun); d > 30*time.Second {
		t.Errorf("the canceled step ended after %s", d)
	}
}
