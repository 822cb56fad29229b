package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/remote/transport"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// DefaultMaxBundle bounds every bundle a remote step sends or takes back.
const DefaultMaxBundle = queue.DefaultMaxBundleBytes

// Options make a Runner.
type Options struct {
	// Local is the lead's own runner: every part of the seam but RunStep
	// of a remote kind goes to it (worktrees, looks, leftovers, guards).
	Local step.Runner
	// Config is the wave; its Executor says which kinds are remote.
	Config *spec.Config
	Queue  *queue.Queue
	// Transport makes and accepts the bundles in the lead's repositories.
	Transport *transport.Transport
	// Cache is a folder of the lead's for base bundles (one per base
	// commit) and the bundles of each run while it is sent and taken back.
	Cache string
	// MaxBundle bounds each bundle (0: DefaultMaxBundle).
	MaxBundle int64
	// Poll is how often the run's owner is read while the step runs, for
	// its worker and tokens so far (0: a second).
	Poll time.Duration
	// CancelWait bounds the wait for a canceled step's result (0: 30s).
	CancelWait time.Duration
	// Failpoint, for tests only, is called with the name of each point
	// the runner passes (FailAccepted); nil: none.
	Failpoint func(name string)
}

// FailAccepted is a failpoint (Options.Failpoint, tests only): a result
// bundle was accepted into the lot's branch and worktree, and the step's
// result is not yet returned (nor recorded).
const FailAccepted = "remote-accepted"

// Runner is the coordinator's step.Runner for a wave with an executor
// block. It is safe for concurrent use.
type Runner struct {
	step.Runner
	o Options

	mu   sync.Mutex
	sent map[string]bool // base bundles in the queue's store, by name
}

var _ step.Runner = (*Runner)(nil)

// New returns the runner of o.
func New(o Options) *Runner {
	if o.MaxBundle <= 0 {
		o.MaxBundle = DefaultMaxBundle
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.CancelWait <= 0 {
		o.CancelWait = 30 * time.Second
	}
	return &Runner{Runner: o.Local, o: o, sent: map[string]bool{}}
}

// RunStep runs a step of a remote kind on a worker, any other (and every
// step of an integration: Request.Integrating) on the lead's machine. A
// remote step: EventBegin, the lot's repositories sent as bundles, the
// job submitted (a run key a live delivery already runs is
// awaited, not run again), EventStarted and EventProgress from its owner
// while it runs, then each returned bundle accepted into the lot's branch
// and worktree. A refused bundle is the step's incident: the lot is held,
// the bundle kept beside the step's log, nothing of it applied. ctx ending
// cancels the run on its worker.
func (r *Runner) RunStep(ctx context.Context, req step.Request, events step.Events) (step.Result, error) {
	if !Remote(r.o.Config.Executor, req.Kind) || len(req.Repos) == 0 || req.Integrating {
		return r.Runner.RunStep(ctx, req, events)
	}
	if err := events.Emit(step.Event{Kind: step.EventBegin}); err != nil {
		return step.Result{Unstarted: true, Cause: err.Error()}, nil
	}
	job, work, err := r.send(ctx, req)
	if err != nil {
		return step.Result{Status: state.StepInterrupted, Unstarted: true, Cause: "remote step not sent: " + err.Error()}, nil
	}
	res, err := r.await(ctx, job, events)
	if err != nil {
		return step.Result{Status: state.StepInterrupted, Cause: "remote step: " + err.Error()}, nil
	}
	return r.take(ctx, req, work, res), nil
}

// send puts the lot's bundles in the queue's store and submits the job.
func (r *Runner) send(ctx context.Context, req step.Request) (queue.Job, Work, error) {
	lot := r.o.Config.Lot(req.ID)
	if lot == nil {
		return queue.Job{}, Work{}, fmt.Errorf("lot %s is not in the wave", req.ID)
	}
	head, err := r.o.Transport.Head(ctx, req.Repos[0].Worktree)
	if err != nil {
		return queue.Job{}, Work{}, err
	}
	key := RunKey(req, head)
	attach := r.attachable(ctx, req.Reattach)
	if attach {
		key = req.Reattach
	}
	wreq, dirRepo, leftOut := wireRequest(req, lot.Env)
	work := Work{Request: wreq, DirRepo: dirRepo, EnvLeftOut: leftOut, Command: lot.Run != ""}
	if a := r.o.Config.Agent(req.Agent); a != nil {
		work.AgentKind = a.Kind
		if !work.Command {
			if work.Agent, err = wireAgent(a); err != nil {
				return queue.Job{}, Work{}, err
			}
		}
	}
	dir := filepath.Join(r.o.Cache, "runs", key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return queue.Job{}, Work{}, err
	}
	defer os.RemoveAll(dir)
	var names []string
	for _, rp := range req.Repos {
		repo := r.o.Config.Repo(rp.Name)
		if repo == nil {
			return queue.Job{}, Work{}, fmt.Errorf("repository %s is not in the wave", rp.Name)
		}
		h, err := r.o.Transport.Head(ctx, rp.Worktree)
		if err != nil {
			return queue.Job{}, Work{}, err
		}
		if attach {
			// the run's own bundles are in the store already
			work.Repos = append(work.Repos, WorkRepo{Name: rp.Name, Head: h, Result: key + ".result." + keyToken(rp.Name)})
			continue
		}
		base := rp.Start
		if base == "" {
			base = h
		}
		baseName, err := r.sendBase(ctx, repo.Path, base)
		if err != nil {
			return queue.Job{}, Work{}, err
		}
		lotFile := filepath.Join(dir, rp.Name+".lot.bundle")
		if err := r.o.Transport.LotBundle(ctx, repo.Path, req.Branch, base, lotFile); err != nil {
			return queue.Job{}, Work{}, fmt.Errorf("%s: %w", rp.Name, err)
		}
		lotName := key + ".lot." + keyToken(rp.Name)
		if err := r.put(ctx, lotName, lotFile); err != nil {
			return queue.Job{}, Work{}, err
		}
		work.Repos = append(work.Repos, WorkRepo{Name: rp.Name, Base: baseName, Lot: lotName, Head: h, Result: key + ".result." + keyToken(rp.Name)})
		names = append(names, baseName, lotName)
	}
	raw, err := json.Marshal(work)
	if err != nil {
		return queue.Job{}, Work{}, err
	}
	job := queue.Job{RunKey: key, Wave: req.Wave, WaveID: req.WaveID, Lot: req.ID, Step: string(req.Kind), Request: raw, Bundles: names}
	if req.Timeout > 0 {
		job.Deadline = time.Now().Add(req.Timeout)
	}
	if attach {
		return job, work, nil
	}
	return job, work, r.o.Queue.Submit(ctx, job)
}

// attachable says whether the run key of a step an earlier apply left
// (step.Request.Reattach) is known to the engine: a delivery claimed it,
// so it runs, waits for its next delivery, or has its result. A run the
// engine does not know (never delivered, or forgotten after a day) is
// run afresh under the step's own key.
func (r *Runner) attachable(ctx context.Context, key string) bool {
	if key == "" {
		return false
	}
	_, err := r.o.Queue.Live(ctx, key)
	return err == nil
}

// sendBase puts the base bundle of commit once per runner.
func (r *Runner) sendBase(ctx context.Context, repoDir, commit string) (string, error) {
	name := "base." + keyToken(commit)
	r.mu.Lock()
	done := r.sent[name]
	r.mu.Unlock()
	if done {
		return name, nil
	}
	path, err := r.o.Transport.BaseBundle(ctx, repoDir, commit, filepath.Join(r.o.Cache, "bases"))
	if err != nil {
		return "", err
	}
	if err := r.put(ctx, name, path); err != nil {
		return "", err
	}
	r.mu.Lock()
	r.sent[name] = true
	r.mu.Unlock()
	return name, nil
}

func (r *Runner) put(ctx context.Context, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.o.Queue.PutBundle(ctx, name, f, r.o.MaxBundle)
}

// await waits for the job's result, telling its owner's worker and tokens
// as events; ctx ending cancels the run and waits, bounded, for the
// result the worker writes then.
// The worker that wrote the result is told (EventStarted) before await
// returns, when the watch had not seen it run (a step shorter than the
// poll); nothing is emitted once await returned.
func (r *Runner) await(ctx context.Context, job queue.Job, events step.Events) (res queue.Result, err error) {
	got := make(chan struct{})
	watched := make(chan queue.Owner, 1)
	go func() { watched <- r.watch(ctx, job.RunKey, events, got) }()
	defer func() {
		close(got)
		seen := <-watched
		if err == nil && res.Worker != "" && (seen.Worker != res.Worker || seen.Delivery != res.Delivery) {
			_ = events.Emit(step.Event{Kind: step.EventStarted, Worker: res.Worker, RunKey: job.RunKey, Delivery: res.Delivery})
		}
	}()
	awaitCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
			reason := "canceled by the lead"
			if c := context.Cause(ctx); c != nil {
				reason = c.Error()
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_ = r.o.Queue.Cancel(cctx, job.RunKey, reason)
			cancel()
			select {
			case <-time.After(r.o.CancelWait):
				stop()
			case <-got:
			}
		case <-got:
		}
	}()
	res, err = r.o.Queue.Await(awaitCtx, job.RunKey)
	if err != nil && ctx.Err() != nil {
		return queue.Result{}, fmt.Errorf("canceled, and no result from its worker within %s: %w", r.o.CancelWait, ctx.Err())
	}
	return res, err
}

// watch emits EventStarted when a delivery owns the run and EventProgress
// when its tokens change, until got is closed; it returns the last owner
// it told.
func (r *Runner) watch(ctx context.Context, key string, events step.Events, got <-chan struct{}) queue.Owner {
	var owner queue.Owner
	tick := time.NewTicker(r.o.Poll)
	defer tick.Stop()
	for {
		run, err := r.o.Queue.Live(context.WithoutCancel(ctx), key)
		if err == nil && run.State == queue.Running {
			if run.Worker != owner.Worker || run.Delivery != owner.Delivery {
				_ = events.Emit(step.Event{Kind: step.EventStarted, Worker: run.Worker, RunKey: key, Delivery: run.Delivery})
			}
			if run.Tokens != owner.Tokens || run.Worker != owner.Worker || run.Delivery != owner.Delivery {
				_ = events.Emit(step.Event{Kind: step.EventProgress, Worker: run.Worker, RunKey: key, Delivery: run.Delivery,
					Usage: state.Usage{Input: run.Tokens}})
			}
			owner = run.Owner
		}
		select {
		case <-got:
			return owner
		case <-tick.C:
		}
	}
}

// take turns the worker's result into the step's: the lost and failed
// jobs, the step.Result it carries, and each repository's bundle accepted.
func (r *Runner) take(ctx context.Context, req step.Request, work Work, res queue.Result) step.Result {
	switch {
	case res.Lost > 0:
		return step.Result{Status: state.StepFailed, Cause: res.LostMessage(), Usage: state.Usage{Input: res.Tokens}, CostEstimated: true}
	case res.Error != "":
		return step.Result{Status: state.StepInterrupted, Cause: "on worker " + res.Worker + ": " + res.Error}
	}
	var claimed step.Result
	if err := json.Unmarshal(res.Result, &claimed); err != nil {
		return step.Result{Status: state.StepInterrupted, Cause: "the result of worker " + res.Worker + " cannot be read: " + err.Error()}
	}
	out := fromWorker(claimed)
	if claimed.Incident != "" {
		// the worker's guard found it in the worker's own clone, which is
		// gone: its rescue ref and what it put back are not the lead's
		out.Cause = onWorkerClone(res.Worker, out.Cause)
	}
	ctx = context.WithoutCancel(ctx)
	for i, wr := range work.Repos {
		// only the bundle of the delivery that wrote the result
		wr.Result = ResultName(wr, res.Delivery)
		if i >= len(req.Repos) || !contains(res.Bundles, wr.Result) {
			continue
		}
		if err := r.accept(ctx, req, req.Repos[i], wr); err != nil {
			var refused *transport.Refused
			if !errors.As(err, &refused) {
				out.Status, out.Cause = state.StepInterrupted, fmt.Sprintf("the result of worker %s in %s could not be taken: %v", res.Worker, wr.Name, err)
			} else {
				inc := fmt.Sprintf("incident: the result of worker %s for %s was refused and nothing of it applied: %v", res.Worker, wr.Name, err)
				out.Status, out.Incident, out.Held = state.StepFailed, inc, inc
				out.Cause = inc
			}
			break
		}
	}
	// what reached the lot's branches, never what the worker says of them
	r.onBranch(ctx, req, work, &out)
	return out
}

// accept takes the repository's result bundle from the store and accepts
// it into the lot's branch and worktree; a refused bundle is kept beside
// the step's log (or in the cache) and never applied.
func (r *Runner) accept(ctx context.Context, req step.Request, rp step.Repo, wr WorkRepo) error {
	repo := r.o.Config.Repo(rp.Name)
	keep := filepath.Join(r.o.Cache, "refused")
	if req.Log != "" {
		keep = filepath.Dir(req.Log)
	}
	if err := os.MkdirAll(keep, 0o755); err != nil {
		return err
	}
	file := filepath.Join(keep, wr.Result+".bundle")
	var buf bytes.Buffer
	if err := r.o.Queue.GetBundle(ctx, wr.Result, &buf, r.o.MaxBundle); err != nil {
		if errors.Is(err, queue.ErrTooBig) {
			// refused before it is read: nothing of it to keep
			return &transport.Refused{Reason: transport.ReasonOversize, Detail: err.Error(), Bundle: "the engine's store (not fetched)"}
		}
		return err
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		return err
	}
	_, err := r.o.Transport.Accept(ctx, repo.Path, rp.Worktree, file, req.Branch, wr.Head, r.o.MaxBundle)
	var refused *transport.Refused
	if err == nil || !errors.As(err, &refused) {
		_ = os.Remove(file)
	}
	if err == nil && r.o.Failpoint != nil {
		r.o.Failpoint(FailAccepted)
	}
	return err
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
