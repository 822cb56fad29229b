package planner

import (
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// StepAgent is the agent that runs a session of kind for agent lot l, with
// the model and fallback model it is given, as the step-kind table's agent
// class says (internal/state/kinds.go): the lot's agent, model and
// fallback for a write step; its review agent, review model and review
// fallback for a read-only one. a is nil for a kind without a session or
// a lot without agents (a command lot). The orchestrator and the plan
// both read it, so that a plan names the agent apply runs.
func StepAgent(l *spec.Lot, kind state.StepKind) (a *spec.Agent, model, fallback string) {
	info, _ := state.Info(kind)
	switch info.Agent {
	case state.AgentWrite:
		return l.Agent, l.Model, l.FallbackModel
	case state.AgentReview:
		if l.ReviewAgent == nil {
			return l.Agent, l.ReviewModel, l.FallbackModel
		}
		return l.ReviewAgent, l.ReviewModel, l.ReviewFallbackModel
	}
	return nil, "", ""
}

// LotAgents are the agents l's sessions may run with (its agent, then its
// review agent when another), none for a command lot.
func LotAgents(l *spec.Lot) []*spec.Agent {
	var out []*spec.Agent
	for _, a := range []*spec.Agent{l.Agent, l.ReviewAgent} {
		if a != nil && (len(out) == 0 || out[0] != a) {
			out = append(out, a)
		}
	}
	return out
}
