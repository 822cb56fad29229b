package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/remote/transport"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/steptest"
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
	opts     Options // what r was made with
	repo, wt string
	url      string // the engine's
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
	opts := Options{Local: local, Config: cfg, Queue: q, Transport: tr, Cache: t.TempDir(), Poll: 50 * time.Millisecond, CancelWait: 20 * time.Second}
	return &fixture{repo: repo, wt: wt, url: e.URL(), q: q, tr: tr, r: New(opts), local: local, opts: opts}
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
	if err := f.q.PutBundle(c, ResultName(w.Repos[0], 1), fh, DefaultMaxBundle); err != nil {
		t.Error(err)
	}
}

func request(f *fixture, kind state.StepKind) step.Request {
	return step.Request{Lot: step.Lot{Wave: "w", WaveID: steptest.WaveIDFor(f.wt), ID: "a", Branch: branch, Repos: []step.Repo{{Name: "app", Worktree: f.wt}}},
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
		return queue.Result{Result: res, Bundles: []string{ResultName(w.Repos[0], 1)}}, nil
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

// TestRemoteIntegrationGateRunsHere: with test gates sent away, a lot's
// own gate goes to a worker, the merge queue's gate on a rebased tree
// (Request.Integrating) runs with the local runner: integration never
// leaves the lead's machine.
func TestRemoteIntegrationGateRunsHere(t *testing.T) {
	f := newFixture(t, `"tests"`)
	var jobs atomic.Int32
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		w, clone := f.checkout(t, c, job)
		jobs.Add(1)
		out := filepath.Join(t.TempDir(), "result.bundle")
		if err := f.tr.ResultBundle(c, clone, branch, w.Repos[0].Head, out, DefaultMaxBundle); err != nil {
			t.Error(err)
		}
		f.putResult(t, c, w, out)
		res, _ := json.Marshal(step.Result{Status: state.StepOK, HeadAfter: w.Repos[0].Head})
		return queue.Result{Result: res, Bundles: []string{ResultName(w.Repos[0], 1)}}, nil
	})
	gate := request(f, state.StepTest)
	gate.Integrating = true
	if res, err := f.r.RunStep(ctx(t), gate, &recorder{}); err != nil || res.Status != state.StepOK {
		t.Fatalf("integration gate: %+v, %v", res, err)
	}
	if len(f.local.kinds) != 1 || jobs.Load() != 0 {
		t.Errorf("integration gate: local ran %v, worker ran %d; want it here", f.local.kinds, jobs.Load())
	}
	if res, err := f.r.RunStep(ctx(t), request(f, state.StepTest), &recorder{}); err != nil || res.Status != state.StepOK {
		t.Fatalf("lot's gate: %+v, %v", res, err)
	}
	if len(f.local.kinds) != 1 || jobs.Load() != 1 {
		t.Errorf("lot's gate: local ran %v, worker ran %d; want it on the worker", f.local.kinds, jobs.Load())
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
		return queue.Result{Result: res, Bundles: []string{ResultName(w.Repos[0], 1)}}, nil
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

// TestRemoteLateBundleOfFencedDelivery: a worker cut off from the engine
// fences itself, the job is delivered again and run by another worker;
// the fenced worker's result bundle, put late (its connection back) after
// the new owner's, is never the one the lead takes: the lot's branch gets
// the second delivery's commit only.
func TestRemoteLateBundleOfFencedDelivery(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	e := f.q // the lead's connection, which the late put goes through too
	ncA, err := nats.Connect(f.url)
	if err != nil {
		t.Fatal(err)
	}
	jsA, _ := jetstream.New(ncA)
	qA, err := queue.Open(ctx(t), jsA, "team")
	if err != nil {
		t.Fatal(err)
	}
	late, lateDone := make(chan struct{}), make(chan struct{})
	bundleOf := func(c context.Context, job queue.Job, p *queue.Progress, msg string) (queue.Result, Work) {
		w, clone := f.checkout(t, context.WithoutCancel(c), job)
		head := gittest.Commit(t, clone, msg, map[string]string{"f.txt": msg + "\n"})
		out := filepath.Join(t.TempDir(), "result.bundle")
		if err := f.tr.ResultBundle(context.WithoutCancel(c), clone, branch, w.Repos[0].Head, out, DefaultMaxBundle); err != nil {
			t.Error(err)
		}
		fh, _ := os.Open(out)
		defer fh.Close()
		name := testResultName(w.Repos[0], p)
		if err := e.PutBundle(context.WithoutCancel(c), name, fh, DefaultMaxBundle); err != nil {
			t.Error(err)
		}
		res, _ := json.Marshal(step.Result{Status: state.StepOK, HeadAfter: head})
		return queue.Result{Result: res, Bundles: []string{name}}, w
	}
	startedA := make(chan struct{})
	cA, cancelA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() {
		defer close(doneA)
		_ = qA.Serve(cA, queue.WorkerOptions{ID: "cut-1", Slots: 1, Handler: func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
			close(startedA)
			<-c.Done() // fenced
			<-late
			defer close(lateDone)
			r, _ := bundleOf(c, job, p, "a: stale")
			return r, nil
		}})
	}()
	t.Cleanup(func() { cancelA(); <-doneA })
	go func() {
		<-startedA
		ncA.Close() // the partition
		f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
			r, _ := bundleOf(c, job, p, "a: second")
			close(late)
			<-lateDone
			return r, nil
		})
	}()
	res, err := f.r.RunStep(ctx(t), request(f, state.StepImplement), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != state.StepOK || res.Incident != "" {
		t.Fatalf("result %+v", res)
	}
	if got := strings.TrimSpace(gittest.Git(t, f.wt, "log", "--format=%s", "main.."+branch)); got != "a: second" {
		t.Errorf("the lot's commits: %q, want the second delivery's only", got)
	}
}

// testResultName is the name a delivery puts its result bundle under.
func testResultName(wr WorkRepo, p *queue.Progress) string { return ResultName(wr, p.Delivery()) }

// TestRemoteOversizeResultIsIncident: a worker's result bundle over the
// lead's bound is refused before it is read: an incident that holds the
// lot (not an interrupted step the next apply would take again), the
// lot's branch unchanged.
func TestRemoteOversizeResultIsIncident(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	f.r.o.MaxBundle = 200 << 10
	lotBefore := gittest.Git(t, f.repo, "rev-parse", branch)
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		w, clone := f.checkout(t, c, job)
		big := make([]byte, 300<<10) // incompressible: xorshift from a fixed seed
		x := uint64(88172645463325252)
		for i := range big {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			big[i] = byte(x)
		}
		gittest.Commit(t, clone, "a: big", map[string]string{"big.bin": string(big)})
		out := filepath.Join(t.TempDir(), "big.bundle")
		gittest.Git(t, clone, "bundle", "create", "-q", out, "refs/heads/"+branch, "^"+w.Repos[0].Head)
		f.putResult(t, c, w, out)
		res, _ := json.Marshal(step.Result{Status: state.StepOK})
		return queue.Result{Result: res, Bundles: []string{ResultName(w.Repos[0], p.Delivery())}}, nil
	})
	res, err := f.r.RunStep(ctx(t), request(f, state.StepImplement), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Incident == "" || res.Held == "" || res.Status != state.StepFailed || !strings.Contains(res.Cause, "oversize") {
		t.Fatalf("result %+v: want an oversize incident", res)
	}
	if gittest.Git(t, f.repo, "rev-parse", branch) != lotBefore {
		t.Error("an oversize bundle moved the lot's branch")
	}
}

// TestRemoteWorkerToldOfAShortStep: a step whose result comes before the
// runner's first look at the run still tells the worker that ran it
// (EventStarted, which the state's remote record comes from) before
// RunStep returns, and nothing after.
func TestRemoteWorkerToldOfAShortStep(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	opts := f.opts
	opts.Poll = time.Hour
	f.r = New(opts)
	// The worker comes after the runner's first look (whenever that is,
	// the worker must be told).
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
			res, _ := json.Marshal(step.Result{Status: state.StepOK})
			return queue.Result{Result: res}, nil
		})
	}()
	rec := &recorder{}
	res, err := f.r.RunStep(ctx(t), request(f, state.StepReview), rec)
	if err != nil || res.Status != state.StepOK {
		t.Fatalf("RunStep = %+v, %v", res, err)
	}
	rec.mu.Lock()
	evs := slices.Clone(rec.evs)
	rec.mu.Unlock()
	var told []string
	for _, e := range evs {
		if e.Kind == step.EventStarted {
			told = append(told, e.Worker)
		}
	}
	if len(told) != 1 || told[0] != "build-1" {
		t.Errorf("workers told: %q, want [build-1] (events %+v)", told, evs)
	}
}
