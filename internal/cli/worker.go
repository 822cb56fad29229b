package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"

	"github.com/cadence-run/cadence/executor/remote"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/remote/transport"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// runWorker is cadence worker: it pulls the steps of one queue and runs
// them with this machine's local step runner, its sessions under the
// machine's session slots, until SIGINT, SIGTERM or SIGHUP (docs/remote.md,
// Worker).
func runWorker(e *env, args []string) ExitCode {
	fs := newFlags(e, "worker", "", "Pull the steps of a queue from the engine and run them here with the local step runner\n(the same guards, step sandbox and supervisor as apply), until SIGINT, SIGTERM or SIGHUP.\nThe agent CLI and API keys are this machine's own; the lead's agent settings come with the job.")
	url := fs.String("engine", "", "the engine's URL: nats://HOST:PORT or tls://HOST:PORT (required)")
	name := fs.String("queue", "", "the queue to serve (required)")
	slots := fs.Int("slots", 1, "steps at once on this machine, taken from the machine's session slots")
	cache := fs.String("cache", "", "the folder of the runs' clones and bundles (default $CADENCE_HOME/worker)")
	creds := fs.String("credentials", "", "a NATS credentials file")
	host, _ := os.Hostname()
	id := fs.String("id", remoteID(host+"-"+strconv.Itoa(os.Getpid())), "the worker's id in the queue (letters, digits, '-', '_')")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if fs.json {
		fmt.Fprintln(e.stderr, "cadence worker: no -json: it serves until stopped and prints its log")
		return ExitUsage
	}
	switch {
	case len(pos) > 0:
		fmt.Fprintf(e.stderr, "cadence worker: takes no argument (got %q)\n", pos[0])
		return ExitUsage
	case *url == "" || *name == "":
		fmt.Fprintln(e.stderr, "cadence worker: -engine URL and -queue NAME are required")
		return ExitUsage
	case *slots < 1:
		fmt.Fprintln(e.stderr, "cadence worker: -slots must be at least 1")
		return ExitUsage
	}
	if *cache == "" {
		*cache = filepath.Join(e.cadenceHome(), "worker")
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	nc, q, err := openQueue(ctx, *url, *creds, *name)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence worker: %v\n", err)
		return ExitError
	}
	defer nc.Close()
	env := gitint.StepEnviron(os.Environ())
	g := gitint.NewRepos(env)
	g.Git = guardGit(env)
	pool, err := step.SystemHost{Git: g.Git}.OpenSlots(e.layoutOf("", "").SlotsDir(), *slots, "worker "+*id)
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence worker: session slots: %v\n", err)
		return ExitError
	}
	defer pool.Close()
	agentRunner := e.agentRunner(env)
	// One answer to "do boxes run here" for every job of this worker.
	prober := new(box.Prober)
	handler := remote.Handler(remote.WorkerOptions{Queue: q, Transport: &transport.Transport{Repos: g, BaseCache: filepath.Join(*cache, "bases")}, Dir: *cache,
		Load: func(path string) (*spec.Config, error) {
			w, diags := e.loadWave(path, spec.Options{})
			if diags.HasErrors() {
				return nil, diags
			}
			return w.cfg, nil
		},
		NewLocal: func(cfg *spec.Config, denyRead []string) step.Runner {
			return step.NewLocal(step.LocalOptions{Config: cfg, Git: g, Agent: agentRunner, Slots: pool, Env: env, Supervisor: e.supervisor, Home: e.cadenceHome(),
				DenyRead: denyRead, Prober: prober})
		},
		DenyRead: workerSecrets(*creds, e.layoutOf("", "").KeysDir())})
	plural := "s"
	if *slots == 1 {
		plural = ""
	}
	fmt.Fprintf(e.stdout, "worker %s serving queue %s on %s (%d slot%s)\n", *id, *name, *url, *slots, plural)
	err = q.Serve(ctx, queue.WorkerOptions{ID: *id, Slots: *slots, Handler: handler, Agents: e.agentVersions()})
	fmt.Fprintf(e.stdout, "worker %s stopped\n", *id)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(e.stderr, "cadence worker: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// workerSecrets are the worker's files no step may read: its credentials
// file (its nkey seed) and the machine's steering keys, absolute.
func workerSecrets(creds, keys string) []string {
	var out []string
	for _, p := range []string{creds, keys} {
		if p == "" {
			continue
		}
		if a, err := filepath.Abs(p); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// remoteID makes s a worker id (queue.ValidRunKey): any character but
// letters, digits, '-' and '_' becomes '-'.
func remoteID(s string) string {
	out := []rune(s)
	for i, r := range out {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			out[i] = '-'
		}
	}
	return string(out)
}

// agentVersions are the versions of the agent CLIs of the built-in kinds
// this machine has, by kind, for the worker's heartbeat (plan shows them).
func (e *env) agentVersions() map[string]string {
	cfg, diags := spec.NewLoader().LoadBytes([]byte("wave \"probe\" {}\n"), filepath.Join(os.TempDir(), "probe.hcl"), spec.Options{})
	if diags.HasErrors() {
		return nil
	}
	m := e.machine("probe", "")
	out := map[string]string{}
	for _, a := range cfg.Agents {
		if f := m.Agent(a); f.Version != "" {
			out[a.Kind] = f.Version
		}
	}
	return out
}
