package remote

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// loadWave is a worker's Load in these tests.
func loadWave(path string) (*spec.Config, error) {
	cfg, diags := spec.NewLoader().LoadFile(path, spec.Options{})
	if diags.HasErrors() {
		return nil, diags
	}
	return cfg, nil
}

// planted puts, under each of names, a checkpoint bundle whose one ref,
// ref, is at a commit above the job's head that no delivery made (what a
// client holding a worker's credentials could store).
func planted(t *testing.T, f *fixture, c context.Context, w Work, ref string, names ...string) {
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, f.repo, "worktree", "add", "-q", "-b", "evil", other, w.Repos[0].Head)
	gittest.Commit(t, other, "a: planted", map[string]string{"planted.txt": "x\n"})
	scratch := filepath.Join(t.TempDir(), "scratch")
	gittest.Git(t, f.repo, "init", "-q", scratch)
	gittest.Git(t, scratch, "fetch", "-q", f.repo, "refs/heads/evil:"+ref)
	file := filepath.Join(t.TempDir(), "planted.bundle")
	gittest.Git(t, scratch, "bundle", "create", "-q", file, ref, "^"+w.Repos[0].Head)
	for _, name := range names {
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.q.PutBundle(c, name, fh, DefaultMaxBundle); err != nil {
			t.Error(err)
		}
		fh.Close()
	}
}

// TestPlantedCheckpointNotTaken: checkpoints stored under a run's names
// before its first delivery (by a client that never owned it, under the
// undelivered name, delivery 0's and the first delivery's own) are not
// resumed from: the first delivery has no previous owner, so it starts
// from the job's head, and nothing planted reaches the lead.
func TestPlantedCheckpointNotTaken(t *testing.T) {
	f := newFixture(t, `"sessions"`)
	ran := make(chan string, 1)
	h := Handler(WorkerOptions{Queue: f.q, Transport: f.tr, Dir: t.TempDir(), Poll: 50 * time.Millisecond, Load: loadWave,
		NewLocal: func(cfg *spec.Config, _ []string) step.Runner {
			return headRecorder{ran: ran, git: gitint.NewRepos(gittest.Env())}
		}})
	f.serve(t, func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		var w Work
		_ = json.Unmarshal(job.Request, &w)
		wr := w.Repos[0]
		planted(t, f, c, w, "refs/heads/"+branch, wr.Result+".checkpoint", checkpointName(wr, 0), checkpointName(wr, p.Delivery()))
		return h(c, job, p)
	})
	req := request(f, state.StepImplement)
	req.Brief, req.Agent = "commit feature.txt", "claude"
	if _, err := f.r.RunStep(ctx(t), req, &recorder{}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ran:
		if got == "a: planted" {
			t.Errorf("the first delivery resumed from a checkpoint no delivery of the run made")
		}
	default:
		t.Fatal("the step did not run")
	}
	if _, err := os.Stat(filepath.Join(f.wt, "planted.txt")); err == nil {
		t.Errorf("the planted commit reached the lead's worktree")
	}
}

// TestCheckpointOfThePreviousOwner: a delivery whose worker stops after
// its step committed leaves a checkpoint under its own name; the next
// delivery (which takes the released owner record over) resumes from it.
// The same checkpoint replaced by one that names another ref than the
// lot's branch is refused: the next delivery starts from the job's head.
func TestCheckpointOfThePreviousOwner(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace bool
		want    string
	}{{"resumed", false, "a: add feature.txt"}, {"replaced", true, "init"}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, `"sessions"`)
			want := tc.want
			if want == "init" {
				want = strings.TrimSpace(gittest.Git(t, f.repo, "log", "-1", "--format=%s", branch))
			}
			hA := Handler(WorkerOptions{Queue: f.q, Transport: f.tr, Dir: t.TempDir(), Poll: 50 * time.Millisecond, Load: loadWave,
				NewLocal: func(cfg *spec.Config, _ []string) step.Runner {
					return step.NewLocal(step.LocalOptions{Config: cfg, Git: gitint.NewRepos(gittest.Env()), Agent: blockingAgent{},
						Env: []string{"PATH=" + os.Getenv("PATH")}, NoSandbox: true, Home: t.TempDir()})
				}})
			ctxA, stopA := context.WithCancel(context.Background())
			doneA := make(chan struct{})
			go func() {
				defer close(doneA)
				_ = f.q.Serve(ctxA, queue.WorkerOptions{ID: "build-a", Slots: 1, Handler: func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
					var w Work
					_ = json.Unmarshal(job.Request, &w)
					go func() {
						name := checkpointName(w.Repos[0], p.Delivery())
						for c.Err() == nil {
							if f.q.GetBundle(c, name, io.Discard, DefaultMaxBundle) == nil {
								if tc.replace {
									planted(t, f, c, w, "refs/heads/main", name)
								}
								stopA() // worker A stops: its job is released
								return
							}
							time.Sleep(20 * time.Millisecond)
						}
					}()
					return hA(c, job, p)
				}})
			}()
			defer func() { stopA(); <-doneA }()
			res := make(chan error, 1)
			req := request(f, state.StepImplement)
			req.Brief, req.Agent = "commit feature.txt", "claude"
			go func() { _, err := f.r.RunStep(ctx(t), req, &recorder{}); res <- err }()
			select {
			case <-doneA:
			case <-time.After(time.Minute):
				t.Fatal("worker A never checkpointed")
			}
			ran := make(chan string, 1)
			f.serve(t, Handler(WorkerOptions{Queue: f.q, Transport: f.tr, Dir: t.TempDir(), Poll: 50 * time.Millisecond, Load: loadWave,
				NewLocal: func(cfg *spec.Config, _ []string) step.Runner {
					return headRecorder{ran: ran, git: gitint.NewRepos(gittest.Env())}
				}}))
			if err := <-res; err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-ran:
				if got != want {
					t.Errorf("the next delivery started at %q, want %q", got, want)
				}
			default:
				t.Error("the next delivery did not run the step")
			}
		})
	}
}

// blockingAgent commits feature.txt in its folder and blocks until its
// context ends.
type blockingAgent struct{}

func (blockingAgent) Run(ctx context.Context, s agent.Session) agent.Outcome {
	if s.Started != nil {
		s.Started(os.Getpid())
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "feature.txt"), []byte("f\n"), 0o644); err != nil {
		return agent.Outcome{Status: state.StepFailed, Cause: err.Error()}
	}
	for _, args := range [][]string{{"add", "feature.txt"}, {"commit", "-qm", "a: add feature.txt"}} {
		if out, err := gittest.Try(s.Dir, args...); err != nil {
			return agent.Outcome{Status: state.StepFailed, Cause: out}
		}
	}
	<-ctx.Done()
	return agent.Outcome{Status: state.StepInterrupted, Cause: "stopped"}
}
