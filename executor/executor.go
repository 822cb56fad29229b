// Package executor runs a planned wave: it schedules lots by their
// dependencies and priorities under the session, job and repository caps,
// runs each lot's steps (commands, agent sessions, the test gate,
// integration), and records every transition in the state store. It knows
// agents and git only through the small interfaces declared here.
package executor

import (
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/diskspace"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// Agent runs one agent session to its end (step.Agent).
type Agent = step.Agent

// The session types are the agent package's, named here for the executor's
// own code and tests: the executor and every adapter share them.
type (
	// Session is one agent session (agent.Session).
	Session = agent.Session
	// Outcome is how a session ended (agent.Outcome).
	Outcome = agent.Outcome
	// Report is a session's structured report (agent.Report).
	Report = agent.Report
)

// CauseNoReport is the cause of a session that succeeded without its
// structured report (agent.CauseNoReport).
const CauseNoReport = agent.CauseNoReport

// Git is what the orchestrator and the local step runner need of git
// (step.Git).
type Git = step.Git

// Conflict is what an integration conflict says: the files.
type Conflict interface {
	error
	ConflictFiles() []string
}

// Slots hands out cross-process session slots (step.Slots).
type Slots = step.Slots

// EventKind classifies progress events.
type EventKind string

// Event kinds.
const (
	EvLotStart  EventKind = "lot-start"
	EvStepStart EventKind = "step-start"
	EvProgress  EventKind = "progress"
	EvStepEnd   EventKind = "step-end"
	EvOutput    EventKind = "output"
	EvLotEnd    EventKind = "lot-end"
	EvWave      EventKind = "wave"
)

// Event is one thing that happened, for the live display and -json.
type Event struct {
	Time  time.Time      `json:"time"`
	Kind  EventKind      `json:"kind"`
	Lot   string         `json:"lot,omitempty"`
	Step  state.StepKind `json:"step,omitempty"`
	Pass  int            `json:"pass,omitempty"`
	Model string         `json:"model,omitempty"`
	// Status is the step's, lot's or wave's status after the event.
	Status string      `json:"status,omitempty"`
	Usage  state.Usage `json:"usage"`
	// Message is output text, a cause, or a note.
	Message string `json:"message,omitempty"`
}

// Options configure a run.
type Options struct {
	Config *spec.Config
	Plan   *planner.Plan
	Store  *state.Store
	Agent  Agent
	Git    Git
	Slots  Slots
	// Steps makes the run's step runner from the options of this
	// machine's (nil: step.NewLocal): a runner that wraps or replaces
	// step.Local. The options carry the wave's guard, which the merge
	// queue shares: cadence's own moves of the base are recorded there, so
	// a runner whose steps touch this machine's repositories must run them
	// under that guard (a step.Local made from these options does).
	Steps func(step.LocalOptions) step.Runner
	// Briefs renders the prompts of agent sessions.
	Briefs *briefs.Set
	// Env is the environment of every child process.
	Env []string
	// Supervisor is what every command step and setup runs under (nil:
	// none; step.LocalOptions.Supervisor): sessions get theirs from the
	// agent's host.
	Supervisor *step.Supervisor
	// NoStepSandbox runs every command step outside the step sandbox, as
	// on a machine without one (step.LocalOptions.NoSandbox).
	NoStepSandbox bool
	// Layout names the wave's files: logs, reports, worktrees.
	Layout layout.Wave
	// MaxSessions and Jobs cap agent sessions and command lots in this
	// process; Budget is the wave budget in counted tokens (0: none),
	// BudgetUSDMicros its dollar ceiling in millionths of a dollar (0: none).
	MaxSessions, Jobs int
	// FreePlaces are the folders the run writes in; below MinFree bytes
	// free on any of them (0: no check) no new lot starts: the wave stops,
	// interrupted, with the free space (Result.Machine).
	FreePlaces      []diskspace.Place
	MinFree         uint64
	Budget          int64
	BudgetUSDMicros int64
	// QuotaUntil, when set, is the reset time of a usage limit recorded by
	// an earlier run: no session starts before it (the run waits, as with
	// on_quota = "wait"; ctx ends the wait), and the state keeps it while
	// it has not passed.
	QuotaUntil *time.Time
	// APIBackoff is the first wait before a step that ended on an
	// overloaded API runs again in a fresh session (0: DefaultAPIBackoff;
	// apifail.go).
	APIBackoff time.Duration
	// Events receives progress events; it must be safe for concurrent use.
	Events func(Event)
	// Now is the clock (tests).
	Now func() time.Time
	// Failpoint, for tests only, names a point where cadence kills its own
	// process (SIGKILL) to test recovery: "" (none) or
	// FailIntegrateBetweenRepos, FailSteerTaken, FailBatchStacked or
	// FailBatchAdvanced.
	Failpoint string
	// Since is when the caller took the wave lock (zero: when Run began):
	// a stop request sent before it was left by an earlier apply and is
	// cleared (steer.go).
	Since time.Time
	// SteerKeys are the apply's steering keys (control.MakeKey: its own,
	// then the one a killed apply left): a request in the channel signed
	// with none of them is refused (steer.go). None: requests are not
	// checked (a run without a wave file, tests of Run).
	SteerKeys [][]byte
}

// Result is how a run ended.
type Result struct {
	// Status is the wave's status at the end.
	Status state.WaveStatus
	// Lots counts the lots per status at the end (lots of this plan).
	Lots map[state.LotStatus]int
	// Outside counts the lots of the wave file that -target left out of the
	// plan and that are not done (lots done by an earlier run count as
	// done: a wave whose every lot is done is done, however it got there).
	Outside int
	// ResetAt is when a usage limit resets (suspended-quota).
	ResetAt *time.Time
	// Ceiling is the ceiling that suspended the wave (suspended-budget):
	// CeilingTokens or CeilingUSD.
	Ceiling string
	// Incident says why the wave stopped on an incident, if it did: a
	// push, or a guarded ref or worktree HEAD moved (and put back).
	Incident string
	// API says why the wave stopped on an API failure (suspended-api), if
	// it did, and what to do, in one sentence with no ending: "The API
	// refused the sessions for lack of credit (…): add credit to the
	// account (or fix its billing)" (apifail.go).
	API string
	// Stopped says why the wave stopped at the lead's request (cadence
	// stop, StopCause), if it did: the wave is interrupted, to resume.
	Stopped string
	// Machine is the machine error that stopped the wave, if one did: a
	// write that failed (a full disk: "disk full: <path>: <error> (<free>
	// free on <mount>)"). The wave is interrupted, to resume once the
	// machine is mended.
	Machine string
	// State is a copy of the state at the end; Apply sets it (Run does not).
	State *state.State
}
