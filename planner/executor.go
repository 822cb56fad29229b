package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/cadence-run/cadence/spec"
)

// Warning kinds of the executor block (docs/remote.md).
const (
	// WarnEngineClear: a nats:// engine URL that is not loopback sends
	// source code and briefs in clear; tls:// is needed.
	WarnEngineClear WarningKind = "engine-without-tls"
	// WarnNoWorker: no live worker serves the queue (or the engine could
	// not be asked): remote steps wait until one does.
	WarnNoWorker WarningKind = "no-worker"
)

// ExecutorPlan is where the plan's steps run: the wave's executor block,
// and what the engine said of its queue. Plan.Executor is nil when every
// step runs on this machine.
type ExecutorPlan struct {
	// Kind is the block's label (spec.ExecutorNATS); URL the engine's
	// address (spec.Redacted when it derives from a sensitive value);
	// Queue the queue's name; Remote the step classes that leave the
	// machine (spec.RemoteSessions, spec.RemoteTests); Lease the lease.
	Kind, URL, Queue string
	Remote           []string
	Lease            time.Duration
	// Asked says the engine was asked (not offline, no error): Workers
	// and Pool are then its answer; Err is why it could not be asked.
	Asked bool
	Err   string
	// Workers are the live workers of the queue, by id.
	Workers []RemoteWorker
	// Pool is the queue's pool of slots.
	Pool RemotePool
}

// RemoteWorker is a live worker as its last heartbeat tells it.
type RemoteWorker struct {
	ID string
	// Agents maps an agent kind to its CLI's version.
	Agents map[string]string
	// Toolchains are the tools it offers ("node@22", "go@1.26").
	Toolchains []string
	// Slots are its own step slots, Free those not in use.
	Slots, Free int
}

// RemotePool is a queue's pool: its cap (set when the queue was made),
// the steps in flight, the free slots and the steps not yet delivered.
type RemotePool struct {
	Cap, InFlight, Free int
	Queued              uint64
}

// RemoteFacts is what an engine says of a queue (RemoteMachine).
type RemoteFacts struct {
	Workers []RemoteWorker
	Pool    RemotePool
}

// RemoteMachine is a Machine that can ask the executor's engine; a
// Machine without it, or an offline plan, shows the block only.
type RemoteMachine interface {
	Remote(x *spec.Executor) (RemoteFacts, error)
}

// planExecutor fills Plan.Executor from the wave's block and, when m can
// ask the engine, its workers and pool; it warns on a clear-text engine
// beyond loopback and on a queue no live worker serves while remote
// steps are pending.
func (b *builder) planExecutor(m Machine) {
	x := b.cfg.Executor
	if x == nil {
		return
	}
	p := &ExecutorPlan{Kind: x.Kind, URL: x.Sensitive.Show("url", x.URL), Queue: x.Queue, Remote: x.Remote, Lease: x.Lease}
	b.plan.Executor = p
	if strings.HasPrefix(x.URL, "nats://") && !x.Loopback() {
		b.warn(Warning{Kind: WarnEngineClear, Message: fmt.Sprintf(
			"the engine %s is not on this machine and its URL is nats://: source code, briefs and results would cross the network in clear; use tls:// (docs/remote.md)", p.URL)})
	}
	rm, ok := m.(RemoteMachine)
	if !ok || m == nil {
		return
	}
	facts, err := rm.Remote(x)
	if err != nil {
		p.Err = err.Error()
	} else {
		p.Asked, p.Workers, p.Pool = true, facts.Workers, facts.Pool
	}
	if b.plan.Totals.PendingAgent+b.plan.Totals.PendingCommand == 0 || len(p.Workers) > 0 {
		return
	}
	msg := fmt.Sprintf("no live worker serves the queue %q: remote steps wait until one starts (cadence worker -engine URL -queue %s)", x.Queue, x.Queue)
	if err != nil {
		msg = fmt.Sprintf("the engine could not be asked about the queue %q: %v; remote steps wait until it answers and a worker serves the queue", x.Queue, err)
	}
	b.warn(Warning{Kind: WarnNoWorker, Message: msg})
}
