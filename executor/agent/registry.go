package agent

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

var (
	regMu    sync.RWMutex
	adapters = map[string]Adapter{}
)

// Register makes a the adapter of agent blocks with kind = "<kind>". It
// panics when the kind is empty, a is nil, or the kind is already taken:
// registration is wiring, done once at start-up (internal/cli/agents.go).
func Register(kind string, a Adapter) {
	if kind == "" || a == nil {
		panic("agent.Register: empty kind or nil adapter")
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := adapters[kind]; dup {
		panic(fmt.Sprintf("agent.Register: kind %q registered twice", kind))
	}
	adapters[kind] = a
}

// Lookup returns the adapter registered for kind.
func Lookup(kind string) (Adapter, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	a, ok := adapters[kind]
	return a, ok
}

// Kinds lists the registered kinds, sorted: what spec accepts as an agent
// block's kind (spec.Options.AgentKinds).
func Kinds() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(adapters))
	for k := range adapters {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Command is the executable that runs agent a: the value of its adapter's
// Tool.EnvOverride when that is set and a is the kind's own agent (named
// like its kind: CADENCE_CLAUDE_BIN overrides agent "claude", built in or
// declared, and no other), else a.Command. getenv reads the environment
// (the CLI passes its own; nothing below it reads the environment).
func Command(a *spec.Agent, getenv func(string) string) string {
	if ad, ok := Lookup(a.Kind); ok && getenv != nil && a.Name == a.Kind {
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
	ad, ok := Lookup(kind)
	if !ok {
		return Outcome{Status: state.StepFailed, Cause: fmt.Sprintf("no agent adapter for kind %q (known: %v)", kind, Kinds())}
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
	ad, ok := Lookup(a.Kind)
	if !ok {
		return Spent{}, false
	}
	return ad.Recount(sessionID, dir, logPrefix, r.Host.Env)
}
