package agent

import (
	"context"
	"fmt"
	"sort"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Registry maps an agent block's kind (spec.Agent.Kind) to the adapter that
// runs its sessions. The CLI builds one per process (internal/cli/agents.go)
// and passes it to what needs it: the Router the executor runs sessions
// through, the decoding of agents' settings (DecodeSettings), preflight,
// `cadence version` and the language server. It is read-only once built and
// safe for concurrent use.
type Registry struct {
	byKind map[string]Adapter
	kinds  []string
}

// NewRegistry returns the registry of the given adapters, each under its
// Kind. It panics when an adapter is nil, its kind empty, or two adapters
// share a kind: building the registry is wiring, done once at start-up.
func NewRegistry(adapters ...Adapter) *Registry {
	r := &Registry{byKind: make(map[string]Adapter, len(adapters))}
	for _, a := range adapters {
		if a == nil || a.Kind() == "" {
			panic("agent.NewRegistry: nil adapter or empty kind")
		}
		k := a.Kind()
		if _, dup := r.byKind[k]; dup {
			panic(fmt.Sprintf("agent.NewRegistry: two adapters of kind %q", k))
		}
		r.byKind[k] = a
		r.kinds = append(r.kinds, k)
	}
	sort.Strings(r.kinds)
	return r
}

// Lookup returns the adapter of kind; false when there is none (also on a
// nil registry).
func (r *Registry) Lookup(kind string) (Adapter, bool) {
	if r == nil {
		return nil, false
	}
	a, ok := r.byKind[kind]
	return a, ok
}

// Kinds lists the registry's kinds, sorted: what spec accepts as an agent
// block's kind (spec.Options.AgentKinds).
func (r *Registry) Kinds() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.kinds...)
}

// Adapters lists the registry's adapters, in the order of Kinds.
func (r *Registry) Adapters() []Adapter {
	out := make([]Adapter, 0, len(r.Kinds()))
	for _, k := range r.Kinds() {
		out = append(out, r.byKind[k])
	}
	return out
}

// DefaultCommand is the executable an agent of kind runs when its block
// sets no command: its adapter's Tool.Command, else the kind's name; ""
// for a kind with no adapter. The CLI passes it to spec as
// spec.Options.AgentCommand.
func (r *Registry) DefaultCommand(kind string) string {
	ad, ok := r.Lookup(kind)
	if !ok {
		return ""
	}
	if c := ad.Tool().Command; c != "" {
		return c
	}
	return kind
}

// Command is the executable that runs agent a: the value of its adapter's
// Tool.EnvOverride when that is set and a is the kind's own agent (named
// like its kind: CADENCE_CLAUDE_BIN overrides agent "claude", built in or
// declared, and no other), else a.Command. getenv reads the environment
// (the CLI passes its own; nothing below it reads the environment).
func (r *Registry) Command(a *spec.Agent, getenv func(string) string) string {
	if ad, ok := r.Lookup(a.Kind); ok && getenv != nil && a.Name == a.Kind {
		if v := ad.Tool().EnvOverride; v != "" {
			if bin := getenv(v); bin != "" {
				return bin
			}
		}
	}
	return a.Command
}

// Router runs each session with the adapter of its agent's kind: it is the
// executor's Agent (executor.Options.Agent).
type Router struct {
	// Adapters are the adapters sessions are routed to (nil: none, every
	// session fails naming its kind).
	Adapters *Registry
	// Host is given to every session; its Command is set per session.
	Host Host
	// Command resolves an agent's executable (nil: the agent's Command).
	Command func(*spec.Agent) string
}

// Run looks up the adapter of s.Agent.Kind and runs the session with it. A
// kind with no adapter (spec refuses it, so only a caller that skipped the
// spec's check gets here) makes a failed outcome.
func (r *Router) Run(ctx context.Context, s Session) Outcome {
	kind := ""
	if s.Agent != nil {
		kind = s.Agent.Kind
	}
	ad, ok := r.Adapters.Lookup(kind)
	if !ok {
		return Outcome{Status: state.StepFailed, Cause: fmt.Sprintf("no agent adapter for kind %q (known: %v)", kind, r.Adapters.Kinds())}
	}
	h := r.Host
	h.Command = s.Agent.Command
	if r.Command != nil {
		h.Command = r.Command(s.Agent)
	}
	return ad.Run(ctx, s, h)
}

// Recount has the adapter of agent a's kind count a stopped session
// (Adapter.Recount) with the Host's environment; false when the kind has no
// adapter or the session left nothing to count.
func (r *Router) Recount(a *spec.Agent, sessionID, dir, logPrefix string) (Spent, bool) {
	if a == nil {
		return Spent{}, false
	}
	ad, ok := r.Adapters.Lookup(a.Kind)
	if !ok {
		return Spent{}, false
	}
	return ad.Recount(sessionID, dir, logPrefix, r.Host.Env)
}
