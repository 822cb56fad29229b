package queue

import (
	"encoding/json"
	"strconv"
	"time"
)

// Job is one step to run remotely: the message of the queue's stream. Its
// Request is a step.Request as JSON (data only); the queue never reads it.
type Job struct {
	// RunKey names one run of one step (KV key characters: letters,
	// digits, '-', '_', '=', '.'; ValidRunKey): a job submitted twice with
	// one run key runs once.
	RunKey string `json:"run_key"`
	Wave   string `json:"wave"`
	WaveID string `json:"wave_id"`
	Lot    string `json:"lot"`
	// Step is the step kind (internal/state/kinds.go).
	Step    string          `json:"step"`
	Request json.RawMessage `json:"request,omitempty"`
	// Bundles are object names in the queue's bundles store.
	Bundles []string `json:"bundles,omitempty"`
	// Deadline, when set, is when the step must have ended (the handler's
	// context ends then).
	Deadline time.Time `json:"deadline,omitzero"`
}

// Result is what came of a job: the value of its run key in the results
// bucket, written only by the delivery that owns the run key.
type Result struct {
	RunKey string `json:"run_key"`
	// Sequence is the job's message in the stream; Delivery counts its
	// deliveries (1: the first) and names the one that wrote this result.
	Sequence uint64 `json:"sequence"`
	Delivery uint64 `json:"delivery"`
	// Worker is the id of the worker that wrote the result.
	Worker string `json:"worker"`
	// Result is a step.Result as JSON; empty when Error or Lost says why.
	Result  json.RawMessage `json:"result,omitempty"`
	Bundles []string        `json:"bundles,omitempty"`
	// Events are the step's events, at most MaxEvents and MaxEventBytes in
	// all: the oldest are left out first, and EventsLeftOut counts them.
	Events        []json.RawMessage `json:"events,omitempty"`
	EventsLeftOut int               `json:"events_left_out,omitempty"`
	// Error is set when the handler returned an error or panicked: the
	// step did not give a result.
	Error string `json:"error,omitempty"`
	// Lost > 0 says the job was never finished: Lost deliveries in a row
	// ended without a result (their workers died or were fenced), the
	// queue's max_deliver; the lot is handed back "worker lost N times"
	// (LostMessage). Tokens is the last figure the lost deliveries
	// reported (an estimate).
	Lost   int   `json:"lost,omitempty"`
	Tokens int64 `json:"tokens,omitempty"`
}

// LostMessage is how a lost job is told: "worker lost N times".
func (r Result) LostMessage() string {
	if r.Lost == 1 {
		return "worker lost 1 time"
	}
	return "worker lost " + strconv.Itoa(r.Lost) + " times"
}

// Bounds of a result's events.
const (
	MaxEvents     = 200
	MaxEventBytes = 256 << 10
)

// boundEvents leaves out the oldest events beyond MaxEvents and
// MaxEventBytes, counting them in EventsLeftOut.
func (r *Result) boundEvents() {
	total := 0
	keep := len(r.Events)
	for i := len(r.Events) - 1; i >= 0; i-- {
		if len(r.Events)-i > MaxEvents || total+len(r.Events[i]) > MaxEventBytes {
			break
		}
		total += len(r.Events[i])
		keep = i
	}
	if keep > 0 {
		r.EventsLeftOut += keep
		r.Events = append([]json.RawMessage(nil), r.Events[keep:]...)
	}
}

// Owner is the value of a run key in the runs bucket: the delivery that
// owns the run. It is written by compare-and-set on the key's revision
// only, and rewritten by its delivery at every lease extension, so that a
// revision that stops moving tells a dead or fenced owner.
type Owner struct {
	Sequence uint64 `json:"sequence"`
	Delivery uint64 `json:"delivery"`
	Worker   string `json:"worker"`
	State    State  `json:"state"`
	// Tokens are the tokens the step reported so far.
	Tokens int64 `json:"tokens,omitempty"`
	// Renewals counts the owner's extensions (the value changes at each).
	Renewals uint64 `json:"renewals"`
}

// State is an owner's state.
type State string

// States of an owner.
const (
	// Running: the delivery runs the job.
	Running State = "running"
	// Released: the worker stopped (Serve's context ended) and gave the
	// job up without a result; the next delivery takes it at once.
	Released State = "released"
	// Done: the delivery wrote the result.
	Done State = "done"
)

// Heartbeat is a worker's value in the workers bucket, written every
// lease/3 and gone three leases after the last.
type Heartbeat struct {
	ID string `json:"id"`
	// Agents maps an agent kind to its CLI's version.
	Agents map[string]string `json:"agents,omitempty"`
	// Toolchains are the tools the worker offers (node@22, go@1.26, ...).
	Toolchains []string `json:"toolchains,omitempty"`
	Slots      int      `json:"slots"`
	Free       int      `json:"free"`
	// Time is the worker's clock when it wrote the heartbeat.
	Time time.Time `json:"time"`
}
