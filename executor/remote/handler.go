package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/remote/transport"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/ids"
	"github.com/cadence-run/cadence/spec"
)

// WorkerOptions make a worker's Handler.
type WorkerOptions struct {
	Queue     *queue.Queue
	Transport *transport.Transport
	// Dir is the worker's cache: each run gets a folder under Dir/runs,
	// removed when the run ends.
	Dir string
	// Load decodes the wave file the handler writes for a run (the
	// worker's own agents' settings and kinds: internal/cli's loader).
	Load func(path string) (*spec.Config, error)
	// NewLocal makes the local step runner of a run's wave (step.Local
	// with the worker's git, agents, slots, environment and supervisor),
	// whose steps must not read denyRead (step.LocalOptions.DenyRead).
	NewLocal func(cfg *spec.Config, denyRead []string) step.Runner
	// DenyRead are the worker's files and folders no step may read (its
	// credentials file, the machine's steering keys): each run's step
	// runner gets them, with every entry of Dir but the run's own folder
	// (other runs' clones, the base cache) as the run starts.
	DenyRead []string
	// MaxBundle bounds each bundle (0: DefaultMaxBundle); Poll is how
	// often HEAD is read for a checkpoint (0: two seconds).
	MaxBundle int64
	Poll      time.Duration
}

// baseBranch is the branch of the base commit in a worker's clone: the
// ref its guard watches as the repository's base.
const baseBranch = "cadence-base"

// Handler returns the queue handler of a worker: it checks the job's
// bundles out in a folder of the run's (a clone per repository, no
// remote), resumes from the run's checkpoint when an earlier delivery
// left one, runs the step with the local step runner (the same guards,
// box and supervisor as a local apply), uploads a checkpoint whenever a
// repository's HEAD moves, and returns the step's result with a result
// bundle per repository. The run's folder is removed when it ends.
func Handler(o WorkerOptions) queue.Handler {
	if o.MaxBundle <= 0 {
		o.MaxBundle = DefaultMaxBundle
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	return func(ctx context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		var w Work
		if err := json.Unmarshal(job.Request, &w); err != nil {
			return queue.Result{}, fmt.Errorf("job %s: %w", job.RunKey, err)
		}
		if len(w.Repos) == 0 || len(w.Repos) != len(w.Request.Repos) {
			return queue.Result{}, fmt.Errorf("job %s: %d repositories for %d in the request", job.RunKey, len(w.Repos), len(w.Request.Repos))
		}
		dir := filepath.Join(o.Dir, "runs", job.RunKey)
		_ = os.RemoveAll(dir) // a dead delivery's folder on this worker
		if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
			return queue.Result{}, err
		}
		defer os.RemoveAll(dir)
		return o.run(ctx, job, w, dir, p)
	}
}

func (o WorkerOptions) run(ctx context.Context, job queue.Job, w Work, dir string, p *queue.Progress) (queue.Result, error) {
	req := w.Request
	clones := make([]string, len(w.Repos))
	for i, wr := range w.Repos {
		clone, err := o.checkout(ctx, dir, req.Branch, wr, p)
		if err != nil {
			return queue.Result{}, fmt.Errorf("%s: %w", wr.Name, err)
		}
		clones[i] = clone
		req.Repos[i].Worktree = clone
		if wr.Name == w.DirRepo || (w.DirRepo == "" && i == 0) {
			req.Dir = clone
		}
	}
	file := filepath.Join(dir, "wave.hcl")
	wave, err := waveFile(req, w, clones)
	if err != nil {
		return queue.Result{}, fmt.Errorf("job %s: %w", job.RunKey, err)
	}
	if err := os.WriteFile(file, wave, 0o644); err != nil {
		return queue.Result{}, err
	}
	cfg, err := o.Load(file)
	if err != nil {
		return queue.Result{}, err
	}
	req.Log = filepath.Join(dir, "logs", keyToken(string(req.Kind))+".log")
	// The run's processes are marked as the run's, not the lead's wave:
	// an apply of the wave on this machine ends what an earlier apply of
	// it left running (found by the wave's mark), never a worker's step.
	req.WaveID = RunMark(job.RunKey)
	if req.SessionID != "" {
		// Each delivery is a fresh session: a lost delivery's session
		// (its transcript on the dead worker) is never continued.
		req.SessionID = ids.UUID()
	}
	ev := &collected{p: p}
	stop := o.checkpoints(ctx, req.Branch, w, clones, p)
	res, err := o.NewLocal(cfg, o.denyRead(dir)).RunStep(ctx, req, ev)
	stop()
	if err != nil {
		return queue.Result{}, err
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return queue.Result{}, err
	}
	out := queue.Result{Result: raw, Events: ev.list()}
	for i, wr := range w.Repos {
		name := ResultName(wr, p.Delivery())
		if err := o.upload(context.WithoutCancel(ctx), clones[i], req.Branch, wr.Head, name); err != nil {
			return queue.Result{}, fmt.Errorf("%s: %w", wr.Name, err)
		}
		out.Bundles = append(out.Bundles, name)
	}
	return out, nil
}

// checkout fetches the repository's bundles into dir and checks the lot's
// branch out in a clone, then resumes from the checkpoint of the delivery
// whose owner record this one took over (p.Previous), when it left one
// (resume).
func (o WorkerOptions) checkout(ctx context.Context, dir, branch string, wr WorkRepo, p *queue.Progress) (string, error) {
	files := map[string]string{}
	for _, name := range []string{wr.Base, wr.Lot} {
		f := filepath.Join(dir, keyToken(name)+".bundle")
		if err := o.get(ctx, name, f); err != nil {
			return "", err
		}
		files[name] = f
	}
	clone := filepath.Join(dir, "repos", keyToken(wr.Name))
	head, err := o.Transport.Checkout(ctx, clone, files[wr.Base], files[wr.Lot], branch)
	if err != nil {
		return "", err
	}
	if head != wr.Head {
		// the store's lot bundle is not the one the lead made (any client
		// that may write bundles could have replaced it): its commits
		// would come back in this run's result as this worker's
		return "", fmt.Errorf("the lot bundle %s is at %.12s, not at %.12s, the head the job names", wr.Lot, head, wr.Head)
	}
	base := strings.TrimPrefix(wr.Base, "base.")
	if _, err := o.Transport.Repos.Run(ctx, clone, "branch", baseBranch, base); err != nil {
		return "", err
	}
	o.resume(ctx, dir, clone, branch, wr, p)
	return clone, nil
}

// resume fast-forwards the clone's branch to the checkpoint of the
// previous delivery (p.Previous) when it stored one, verified as the lead
// verifies a result (transport.Accept: within the size cap, only the
// lot's branch, objects that pass git's checks, a descendant of the
// job's head wr.Head), and stores it again under this delivery's own
// checkpoint name, so a next delivery resumes from it even when this one
// dies before it commits. A missing or refused checkpoint is not taken:
// the run starts from the job's head, and the refused bundle stays in
// the store, untouched.
func (o WorkerOptions) resume(ctx context.Context, dir, clone, branch string, wr WorkRepo, p *queue.Progress) {
	if p.Previous() == 0 {
		return
	}
	cp := filepath.Join(dir, keyToken(wr.Name)+".checkpoint.bundle")
	if err := o.get(ctx, checkpointName(wr, p.Previous()), cp); err != nil {
		return
	}
	if _, err := o.Transport.Accept(ctx, clone, clone, cp, branch, wr.Head, o.MaxBundle); err != nil {
		return
	}
	if fh, err := os.Open(cp); err == nil {
		_ = p.Checkpoint(ctx, checkpointName(wr, p.Delivery()), fh)
		fh.Close()
	}
}

// denyRead is what the step of the run in folder run (Dir/runs/KEY) must
// not read: o.DenyRead, and every entry of Dir and of Dir/runs but the
// run's own folder, as they are now. A run that starts later on this
// worker is not in the list (docs/remote.md, Security).
func (o WorkerOptions) denyRead(run string) []string {
	out := slices.Clone(o.DenyRead)
	runs := filepath.Dir(run)
	for _, d := range []string{o.Dir, runs} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if p := filepath.Join(d, e.Name()); p != run && p != runs {
				out = append(out, p)
			}
		}
	}
	return out
}

// checkpointName is the name of the checkpoint bundle of wr that
// delivery stores: one per delivery, so a run resumes only from the
// delivery whose owner record it took over.
func checkpointName(wr WorkRepo, delivery uint64) string {
	return wr.Result + ".checkpoint.d" + strconv.FormatUint(delivery, 10)
}

func (o WorkerOptions) get(ctx context.Context, name, file string) error {
	var buf bytes.Buffer
	if err := o.Queue.GetBundle(ctx, name, &buf, o.MaxBundle); err != nil {
		return err
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}

func (o WorkerOptions) upload(ctx context.Context, clone, branch, head, name string) error {
	f := filepath.Join(filepath.Dir(filepath.Dir(clone)), keyToken(name)+".bundle")
	if err := o.Transport.ResultBundle(ctx, clone, branch, head, f, o.MaxBundle); err != nil {
		return err
	}
	fh, err := os.Open(f)
	if err != nil {
		return err
	}
	defer fh.Close()
	return o.Queue.PutBundle(ctx, name, fh, o.MaxBundle)
}

// checkpoints uploads a checkpoint bundle of each repository whose HEAD
// moved, every Poll, until the returned stop is called.
func (o WorkerOptions) checkpoints(ctx context.Context, branch string, w Work, clones []string, p *queue.Progress) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := make([]string, len(clones))
		for i, wr := range w.Repos {
			last[i] = wr.Head
		}
		tick := time.NewTicker(o.Poll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for i, clone := range clones {
				head, err := o.Transport.Head(ctx, clone)
				if err != nil || head == last[i] {
					continue
				}
				f := clone + ".checkpoint.bundle"
				if o.Transport.Checkpoint(ctx, clone, branch, w.Repos[i].Head, f, o.MaxBundle) != nil {
					continue
				}
				if fh, err := os.Open(f); err == nil {
					if p.Checkpoint(ctx, checkpointName(w.Repos[i], p.Delivery()), fh) == nil {
						last[i] = head
					}
					fh.Close()
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// waveFile is the wave a run's local step runner reads: the wave's name,
// the step's agent (the block the job carries, else its kind with the
// worker's defaults), each
// repository at its clone with the base branch of the clone, and the lot.
func waveFile(req step.Request, w Work, clones []string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "wave %s {}\n", hclString(req.Wave))
	if w.Agent != nil && w.Agent.Name == req.Agent && !w.Command {
		if err := agentBlock(&b, w.Agent); err != nil {
			return nil, err
		}
	} else if req.Agent != "" && req.Agent != spec.BuiltinAgent {
		kind := w.AgentKind
		if kind == "" {
			kind = spec.AgentKindClaude
		}
		fmt.Fprintf(&b, "agent %s {\n  kind = %s\n}\n", hclString(req.Agent), hclString(kind))
	}
	for i, wr := range w.Repos {
		fmt.Fprintf(&b, "repo %s {\n  path = %s\n  base = %s\n  sandbox = %t\n}\n", hclString(wr.Name), hclString(clones[i]), hclString(baseBranch), !req.NoSandbox)
	}
	fmt.Fprintf(&b, "lot %s {\n  repo = repo.%s\n", hclString(req.ID), w.Repos[0].Name)
	if len(w.Repos) > 1 {
		var also []string
		for _, wr := range w.Repos[1:] {
			also = append(also, "repo."+wr.Name)
		}
		fmt.Fprintf(&b, "  also = [%s]\n", strings.Join(also, ", "))
	}
	if w.Command {
		b.WriteString("  run = \"true\"\n")
	} else {
		b.WriteString("  brief = \"-\"\n")
		if req.Agent != "" && req.Agent != spec.BuiltinAgent {
			fmt.Fprintf(&b, "  agent = agent.%s\n", req.Agent)
		}
	}
	b.WriteString("}\n")
	return []byte(b.String()), nil
}

// hclString quotes s as an HCL string with no template sequence.
func hclString(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

// collected takes a run's events in: progress becomes the run's tokens
// so far; every event is kept (the queue bounds them) for the lead.
type collected struct {
	p  *queue.Progress
	mu sync.Mutex
	ev []json.RawMessage
}

func (c *collected) Emit(e step.Event) error {
	if e.Kind == step.EventProgress {
		c.p.Tokens(e.Usage.Counted())
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ev) >= queue.MaxEvents {
		c.ev = c.ev[1:]
	}
	c.ev = append(c.ev, raw)
	return nil
}

func (c *collected) list() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.ev...)
}
