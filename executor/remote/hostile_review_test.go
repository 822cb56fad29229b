package remote

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestJobCarriesNoSensitiveEnv: a lot whose env derives from env() (the
// documented `API_TOKEN = env("API_TOKEN")` of wave-file.md) runs a
// session remotely: the job stored in the engine (readable by every
// worker of the queue, kept a day) must not carry the secret's value
// ("a job carries no secret", docs/remote.md).
func TestJobCarriesNoSensitiveEnv(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	src := "wave \"w\" {}\nexecutor \"nats\" {\n  url = \"nats://127.0.0.1:4222\"\n  queue = \"team\"\n}\n" +
		"repo \"app\" {\n  path = \"" + f.repo + "\"\n}\nlot \"a\" {\n  repo = repo.app\n  brief = \"b\"\n  env = { API_TOKEN = env(\"API_TOKEN\"), PLAIN = \"1\" }\n}\n"
	lookup := func(n string) (string, bool) { return "tok-SECRET-4711", n == "API_TOKEN" }
	cfg, diags := spec.NewLoader().LoadBytes([]byte(src), filepath.Join(t.TempDir(), "wave.hcl"), spec.Options{LookupEnv: lookup})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if !cfg.Lot("a").Sensitive.Has("env") {
		t.Fatal("the lot's env is not marked sensitive")
	}
	f.r.o.Config = cfg
	seen := make(chan []byte, 1)
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		seen <- job.Request
		res, _ := json.Marshal(step.Result{Status: state.StepOK})
		return queue.Result{Result: res}, nil
	})
	req := request(f, state.StepImplement)
	req.Env = append(req.Env, "API_TOKEN=tok-SECRET-4711", "PLAIN=1")
	if _, err := f.r.RunStep(ctx(t), req, &recorder{}); err != nil {
		t.Fatal(err)
	}
	if raw := <-seen; strings.Contains(string(raw), "tok-SECRET-4711") {
		t.Errorf("the job stored in the engine carries the lot's secret env value: %s", raw)
	}
}

// TestRemoteUsageNeverNegative: a worker whose result reports negative
// tokens and a negative cost must not lower what the lead's budget counts
// (session.go adds res.Usage and res.CostMicros to the wave's spend): the
// step's usage and cost as the runner returns them are never negative.
func TestRemoteUsageNeverNegative(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		res, _ := json.Marshal(step.Result{Status: state.StepOK,
			Usage: state.Usage{Input: -5_000_000, Output: -1, CacheWrite: -7, CacheRead: -9}, CostMicros: -900_000_000})
		return queue.Result{Result: res}, nil
	})
	res, err := f.r.RunStep(ctx(t), request(f, state.StepImplement), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	u := res.Usage
	if u.Input < 0 || u.Output < 0 || u.CacheWrite < 0 || u.CacheRead < 0 || res.CostMicros < 0 {
		t.Errorf("a worker's negative usage reached the lead: %+v, cost %d micros", u, res.CostMicros)
	}
}

// TestRemoteResultCommitsAreOnTheBranch: a worker says its session ended
// ok with a commit, but sends no result bundle: the lead records the
// step's Commits and HeadAfter from the result (session.go), so they must
// be what the lot's branch holds after the accept, not what the worker
// claims.
func TestRemoteResultCommitsAreOnTheBranch(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	fake := strings.Repeat("ab", 20)
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		res, _ := json.Marshal(step.Result{Status: state.StepOK, HeadAfter: fake, Commits: []string{fake + " a: the feature"}})
		return queue.Result{Result: res}, nil
	})
	res, err := f.r.RunStep(ctx(t), request(f, state.StepImplement), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(gittest.Git(t, f.repo, "rev-parse", branch))
	if res.Status == state.StepOK && (len(res.Commits) != 0 || res.HeadAfter != head) {
		t.Errorf("the step ok with commits %q and head %.12s, but the lot's branch is at %.12s with no new commit", res.Commits, res.HeadAfter, head)
	}
}

// TestLeadTakesOnlyTheOwnersResult: a client of the queue (a worker's
// credentials: they may write results) writes a result for a run key no
// delivery ever claimed; the lead's await must not take it as the step's
// result: only the result of the delivery that owns the run key counts
// (docs/remote.md, Leases and ownership, 5).
func TestLeadTakesOnlyTheOwnersResult(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	nc, err := nats.Connect(f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(ctx(t), "CADENCE_team_results")
	if err != nil {
		t.Fatal(err)
	}
	req := request(f, state.StepImplement)
	head := strings.TrimSpace(gittest.Git(t, f.wt, "rev-parse", "HEAD"))
	key := RunKey(req, head)
	forged, _ := json.Marshal(step.Result{Status: state.StepOK, Report: nil, Cause: "forged"})
	val, _ := json.Marshal(queue.Result{RunKey: key, Delivery: 1, Worker: "evil", Result: forged})
	go func() {
		time.Sleep(500 * time.Millisecond) // the job is submitted; no worker serves the queue
		if _, err := kv.Put(context.Background(), key, val); err != nil {
			t.Error(err)
		}
	}()
	c, cancel := context.WithTimeout(ctx(t), 8*time.Second)
	defer cancel()
	res, err := f.r.RunStep(c, req, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status == state.StepOK || res.Cause == "forged" {
		t.Errorf("the lead took a result no delivery owned: %+v", res)
	}
}

// TestWorkerRunsOnlyTheHeadSent: the lot bundle in the engine's store is
// replaced (any worker's credentials may write bundles) by one whose
// branch is at another commit than the job's head; the worker must not
// run the step on it (its result would carry the substitute's commits as
// this worker's).
func TestWorkerRunsOnlyTheHeadSent(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	// a commit above the lot's head, as another worker would make it
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, f.repo, "worktree", "add", "-q", "-b", "evil", other, branch)
	gittest.Commit(t, other, "a: planted", map[string]string{"planted.txt": "x\n"})
	ran := make(chan string, 1)
	cache := t.TempDir()
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		var w Work
		_ = json.Unmarshal(job.Request, &w)
		// the substitution, before the worker fetches the lot bundle
		sub := filepath.Join(t.TempDir(), "sub.bundle")
		scratch := filepath.Join(t.TempDir(), "scratch")
		gittest.Git(t, f.repo, "init", "-q", scratch)
		gittest.Git(t, scratch, "fetch", "-q", f.repo, "refs/heads/evil:refs/heads/"+branch)
		gittest.Git(t, scratch, "bundle", "create", "-q", sub, "refs/heads/"+branch, "^"+w.Repos[0].Head)
		fh, _ := os.Open(sub)
		err := f.q.PutBundle(c, w.Repos[0].Lot, fh, DefaultMaxBundle)
		fh.Close()
		if err != nil {
			t.Error(err)
		}
		h := Handler(WorkerOptions{Queue: f.q, Transport: f.tr, Dir: cache, Poll: 50 * time.Millisecond,
			Load: func(path string) (*spec.Config, error) {
				cfg, diags := spec.NewLoader().LoadFile(path, spec.Options{})
				if diags.HasErrors() {
					return nil, diags
				}
				return cfg, nil
			},
			NewLocal: func(cfg *spec.Config, _ []string) step.Runner {
				return headRecorder{ran: ran, git: gitint.NewRepos(gittest.Env())}
			}})
		return h(c, job, p)
	})
	req := request(f, state.StepImplement)
	req.Brief, req.Agent = "commit feature.txt", "claude"
	res, err := f.r.RunStep(ctx(t), req, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case head := <-ran:
		t.Errorf("the worker ran the step on %s, a lot bundle that is not at the job's head; result %+v", head, res)
	default:
	}
	if _, err := os.Stat(filepath.Join(f.wt, "planted.txt")); err == nil {
		t.Errorf("the planted commit reached the lead's worktree")
	}
}

// headRecorder is a step runner that records the commit its step would
// start from.
type headRecorder struct {
	step.Runner
	ran chan string
	git *gitint.Repos
}

func (h headRecorder) RunStep(ctx context.Context, req step.Request, _ step.Events) (step.Result, error) {
	out, _ := h.git.Run(ctx, req.Dir, "log", "-1", "--format=%s")
	h.ran <- strings.TrimSpace(out)
	return step.Result{Status: state.StepOK}, nil
}
