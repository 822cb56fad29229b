package claude

import (
	"math"

	"github.com/cadence-run/cadence/internal/state"
)

// turns counts the model turns of a session by message id, each once,
// whatever the sources: the stream (message_start gives a turn's input
// tokens as soon as it begins, message_delta its final usage, each
// assistant line the usage at its start) and the transcript (each turn's
// final usage, once a content block of it is complete: it lacks a turn
// killed before that). Counts only grow during a turn, so two reports of
// one turn merge field by field, the larger one kept.
type turns struct {
	order []string
	byID  map[string]turn
}

// turn is one model turn: its model and its usage.
type turn struct {
	model string
	usage state.Usage
}

func newTurns() *turns { return &turns{byID: map[string]turn{}} }

// see records a report of turn id (model may be "" when the report does
// not name it).
func (t *turns) see(id, model string, u state.Usage) {
	old, seen := t.byID[id]
	if !seen {
		t.order = append(t.order, id)
	}
	if model == "" {
		model = old.model
	}
	t.byID[id] = turn{model: model, usage: state.Usage{
		Input:      max(old.usage.Input, u.Input),
		CacheWrite: max(old.usage.CacheWrite, u.CacheWrite),
		CacheRead:  max(old.usage.CacheRead, u.CacheRead),
		Output:     max(old.usage.Output, u.Output),
	}}
}

// merge adds the turns of o to t, a turn both know counted once.
func (t *turns) merge(o *turns) {
	if o == nil {
		return
	}
	for _, id := range o.order {
		x := o.byID[id]
		t.see(id, x.model, x.usage)
	}
}

// total is the usage of all turns.
func (t *turns) total() state.Usage {
	var u state.Usage
	for _, id := range t.order {
		u = u.Add(t.byID[id].usage)
	}
	return u
}

// costMicros is the price of all turns, in millionths of a dollar, each at
// its model's list price (Price).
func (t *turns) costMicros() int64 {
	var micros float64
	for _, id := range t.order {
		x := t.byID[id]
		micros += Price(x.model).Micros(x.usage)
	}
	return int64(math.Round(micros))
}

// sessionUsage is a session's usage from its result's figures u and the
// turns its stream and transcript saw, field by field the larger: every
// source is a lower bound. The CLI 2.1.328's result usage leaves out the
// last turn when it gives up on the report schema
// (error_max_structured_output_retries); the stream has each turn.
func sessionUsage(u state.Usage, t *turns) state.Usage {
	s := t.total()
	return state.Usage{Input: max(u.Input, s.Input), CacheWrite: max(u.CacheWrite, s.CacheWrite),
		CacheRead: max(u.CacheRead, s.CacheRead), Output: max(u.Output, s.Output)}
}
