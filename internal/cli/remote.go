package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cadence-run/cadence/executor/remote"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/remote/transport"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// engineWait bounds connecting to an engine and opening its queue.
const engineWait = 10 * time.Second

// openQueue connects to the engine at url (with the credentials file
// creds, "" for none) and opens its queue name (docs/remote.md). The
// connection reconnects on its own; close it when done.
func openQueue(ctx context.Context, url, creds, name string) (*nats.Conn, *queue.Queue, error) {
	opts := []nats.Option{nats.Name("cadence"), nats.Timeout(engineWait), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	if creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("engine %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("engine %s: %w", url, err)
	}
	ctx, cancel := context.WithTimeout(ctx, engineWait)
	defer cancel()
	q, err := queue.Open(ctx, js, name)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("engine %s: %w", url, err)
	}
	return nc, q, nil
}

// Remote implements planner.RemoteMachine: the queue's live workers and
// pool, as the engine tells them.
func (m machine) Remote(x *spec.Executor) (planner.RemoteFacts, error) {
	nc, q, err := openQueue(m.ctx, x.URL, x.Credentials, x.Queue)
	if err != nil {
		return planner.RemoteFacts{}, err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(m.ctx, engineWait)
	defer cancel()
	hbs, err := q.Workers(ctx)
	if err != nil {
		return planner.RemoteFacts{}, err
	}
	pool, err := q.Pool(ctx)
	if err != nil {
		return planner.RemoteFacts{}, err
	}
	var f planner.RemoteFacts
	for _, h := range hbs {
		f.Workers = append(f.Workers, planner.RemoteWorker{ID: h.ID, Agents: h.Agents, Toolchains: h.Toolchains, Slots: h.Slots, Free: h.Free})
	}
	f.Pool = planner.RemotePool{Cap: pool.Cap, InFlight: pool.InFlight, Free: pool.Free, Queued: pool.Queued}
	return f, nil
}

// remoteSteps is the runner factory of a wave whose plan has an executor
// (executor.ApplyOptions.Steps): the remote runner over this machine's
// step.Local, its queue opened now; close ends the connection. A plan
// without one gives a nil factory (step.Local).
func (e *env) remoteSteps(ctx context.Context, cfg *spec.Config, p *planner.Plan, env []string) (func(step.LocalOptions) step.Runner, func(), error) {
	x := cfg.Executor
	if p.Executor == nil || x == nil {
		return nil, func() {}, nil
	}
	nc, q, err := openQueue(ctx, x.URL, x.Credentials, x.Queue)
	if err != nil {
		return nil, nil, err
	}
	cache := filepath.Join(e.cadenceHome(), "remote", cfg.Wave.Name)
	return func(lo step.LocalOptions) step.Runner {
		return remote.New(remote.Options{Local: step.NewLocal(lo), Config: cfg, Queue: q, Transport: transport.New(env), Cache: cache})
	}, nc.Close, nil
}
