// Package planner turns a decoded wave (spec.Config), its state file and facts
// about the machine into an immutable, versioned Plan: what apply would do to
// each lot, in which order, at what cost and with which warnings. It never
// starts a process or touches git: machine facts arrive through the Machine
// interface, and a nil Machine means an offline plan.
package planner

import (
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// FormatVersion is the version of the Plan's JSON form (schemas/plan.schema.json).
const FormatVersion = 1

// Action is what apply would do with a lot.
type Action string

// Actions, with the symbol the text renderer shows.
const (
	ActionRun     Action = "run"     // + run: a lot that has not started
	ActionResume  Action = "resume"  // ~ resume at a step
	ActionAnswer  Action = "answer"  // ? waiting for an answer (cadence answer)
	ActionDone    Action = "done"    // = done: nothing to do
	ActionBlocked Action = "blocked" // - blocked: a dependency needs the lead
	ActionReplace Action = "replace" // ± replace: run again (-replace)
	ActionHeld    Action = "held"    // ! handed back or failed: needs the lead
	// ActionRefused: the plan itself refuses the lot, which would run,
	// with the reason (LotPlan.Reason): today an unresolvable toolchain
	// file in one of its repositories (.nvmrc, .tool-versions, mise.toml).
	// Unlike ActionHeld it is no state of the lot: nothing is recorded,
	// the lead fixes the machine (installs the tool) and applies again;
	// the wave's other lots run (its dependents are ActionBlocked).
	ActionRefused Action = "refused" // × refused by the plan: fix the machine
)

// Actions lists every action in display order.
var Actions = []Action{ActionRun, ActionResume, ActionReplace, ActionAnswer, ActionHeld, ActionRefused, ActionBlocked, ActionDone}

// Symbol is the one-character mark of an action in text output.
func (a Action) Symbol() string {
	switch a {
	case ActionRun:
		return "+"
	case ActionResume:
		return "~"
	case ActionAnswer:
		return "?"
	case ActionDone:
		return "="
	case ActionBlocked:
		return "-"
	case ActionReplace:
		return "±"
	case ActionHeld:
		return "!"
	case ActionRefused:
		return "×"
	}
	return " "
}

// Words is the action as people read it in plan's legend, in the words of
// status and apply's end line (state.Left): "waiting for an answer" for
// ActionAnswer, "handed back / failed" for ActionHeld, else the action's
// value. The JSON form keeps the values.
func (a Action) Words() string {
	switch a {
	case ActionAnswer:
		return "waiting for an answer"
	case ActionHeld:
		return "handed back / failed"
	}
	return string(a)
}

// Pending reports whether apply would start sessions or commands for a lot
// with this action.
func (a Action) Pending() bool {
	return a == ActionRun || a == ActionResume || a == ActionReplace
}

// Plan is the preview of an apply. It is immutable once built.
type Plan struct {
	// FormatVersion is FormatVersion.
	FormatVersion int
	// Wave is the wave's name; File the wave file.
	Wave, File string
	// Offline is true when no machine facts were gathered.
	Offline bool
	// Lots are the lots in the plan (all, or those of -target), in file order.
	Lots []LotPlan
	// Repos are the repositories, in file order.
	Repos []RepoPlan
	// Totals are the sums over the lots.
	Totals Totals
	// Warnings are what the lead should know before applying.
	Warnings []Warning
	// Agent is what was found of the agent CLI (zero when offline or
	// unused): the built-in agent's when pending lots use it, else the
	// first used agent's (what the plan shows and pins).
	Agent AgentFacts
	// Agents are the facts of every agent the pending lots' steps use
	// (their agents and review agents), by agent name; nil offline. The
	// executor answers the sandbox question of each step from its agent's
	// (SandboxMissing).
	Agents map[string]AgentFacts
	// WaveDigest and StateDigest identify the inputs, for saved plans.
	WaveDigest, StateDigest string
	// Targets and Replace echo -target and -replace.
	Targets, Replace []string
	// ResetAt is the recorded reset time of the usage limit that suspended
	// the last run (the state's reset_at), nil when none is recorded; OnQuota
	// is the wave's on_quota, what apply does before that time.
	ResetAt *time.Time
	OnQuota spec.OnQuota
	// Pinned is the tool the wave was started with, as its state records
	// it (state.State.CadenceVersion, AgentVersion: the first apply's, or
	// the last apply -upgrade's); nil when the state records none or
	// nothing is pending (a wave done needs no tool).
	Pinned *Pinned
	// APIFailure is what the last apply said to fix when an API failure
	// suspended the wave (state suspended-api): the cause a suspended lot
	// records (executor's apiAdvice, "The API refused … : add credit to the
	// account (or fix its billing)"); "" when the wave is not suspended-api.
	APIFailure string
	// Executor is where the steps run (the wave's executor block, the
	// engine's workers and pool); nil when every step runs on this machine.
	Executor *ExecutorPlan
}

// Pinned is the tool a wave's state records: cadence's version and the
// agent CLI's ("" when no agent was probed).
type Pinned struct {
	Cadence, Agent string
}

// Step is one planned step of a lot.
type Step struct {
	// Kind is the step kind; Model the model it uses ("" for commands,
	// and for an agent's own default model).
	Kind  state.StepKind
	Model string
	// Agent names the agent that runs the step's sessions and AgentKind
	// its kind (StepAgent: the lot's agent or review agent); "" for a
	// command. Fallback is the fallback model it is given ("" for none).
	Agent, AgentKind, Fallback string
	// Max is the most times the step may run (fix passes); 0 means once.
	Max int
}

// Words is the lot's action as people read it (Action.Words), for a held
// lot its status: "handed back" or "failed".
func (lp *LotPlan) Words() string {
	if lp.Action != ActionHeld {
		return lp.Action.Words()
	}
	if lp.HeldStatus == state.LotFailed {
		return "failed"
	}
	return "handed back"
}

// Resume says where a lot resumes.
type Resume struct {
	Step state.StepKind
	Pass int
}

// LotPlan is the plan for one lot.
type LotPlan struct {
	ID, Title string
	Kind      spec.LotKind
	Action    Action
	// ResumeAt is set for ActionResume.
	ResumeAt *Resume
	// Reason explains blocked, held, refused and answer actions.
	Reason string
	// HeldStatus is the lot's status for ActionHeld: state.LotHandedBack
	// or state.LotFailed (state.Resumption.Status); "" for other actions.
	HeldStatus state.LotStatus
	// BlockedBy are the lots that block this one (ActionBlocked).
	BlockedBy []string
	Repo      string
	// Branch is the lot's branch, of one name in its repository and its
	// also repositories (branches.go: the one the state records, else
	// <namespace>/<lot>); "" for a lot without a repository.
	Branch    string
	Also      []string
	DependsOn []string
	Steps     []Step
	// FallbackModel is the lot's fallback_model (spec.Lot.FallbackModel),
	// spec.Redacted when sensitive; "" for none or a command lot.
	FallbackModel string
	Budget        spec.Tokens
	Estimate      time.Duration
	// EstimateSet is false when Estimate is the built-in default.
	EstimateSet bool
	// Timeout and ReviewTimeout are the lot's effective step timeouts
	// (spec.Lot: a command lot's run step has Timeout); 0 means none.
	Timeout, ReviewTimeout time.Duration
	// Limits are the lot's effective step limits.
	Limits spec.Limits
	// Remaining is the longest path of pending work starting at this lot.
	Remaining time.Duration
	// Spent are the counted tokens the lot has used so far.
	Spent int64
	// Env are the names of the variables the lot's env sets (spec.Lot.Env,
	// merged), sorted, never their values; [spec.Redacted] when the names
	// are sensitive. PathPrepend are the folders its path_prepend puts
	// before PATH, in order; [spec.Redacted] when sensitive. Both nil for
	// none.
	Env, PathPrepend []string
	// Bootstrap is what the lot's worktrees get before its first step
	// (submodules, copy, setup), its own repository's first, only those
	// that get something; nil for none.
	Bootstrap []Bootstrap
}

// RepoPlan is the plan's view of one repository.
type RepoPlan struct {
	Name, Path, Base string
	// BaseSHA is the base branch's commit when checked ("" offline).
	BaseSHA string
	Test    string
	// ProbableTest is the likely test command when Test is empty.
	ProbableTest string
	// TestTimeout is the test gate's timeout; 0 means none.
	TestTimeout time.Duration
	Parallel    int
	// Lots is the number of lots whose own repo this is.
	Lots int
	// Pushes says whether a push from the repository's pending lots is
	// prevented or only detected (PushesNone when no pending lot works in
	// it); PushesReason says why it is not prevented: "command lot gen;
	// agent claude: sandbox = false" ("" when prevented).
	Pushes       Pushes
	PushesReason string
	// Toolchain is what the repository's toolchain files resolved to
	// ("node v22.22.3 from .nvmrc"; "node 20.11.1, python 3.12.2 from
	// .tool-versions (mise)"), "" for none or offline; ToolchainPath the
	// folders they put before PATH for the repository's lots (after their
	// path_prepend), which apply uses; ToolchainEnv the other variables
	// mise sets for them (`mise env`: JAVA_HOME, a mise.toml's [env]),
	// applied under the lots' own env. A plan's JSON shows the names of
	// ToolchainEnv, never the values.
	Toolchain     string
	ToolchainPath []string
	ToolchainEnv  map[string]string
	// ToolchainErr says why a toolchain file of the repository cannot be
	// resolved ("" when it can or there is none): its lots are
	// ActionRefused with it.
	ToolchainErr string
}

// Totals sum up a plan.
type Totals struct {
	// Lots is the number of lots in the plan; ByAction counts them per action.
	Lots     int
	ByAction map[Action]int
	// Outside is the number of lots left out by -target.
	Outside int
	// PendingAgent and PendingCommand count the lots apply would work on.
	PendingAgent, PendingCommand int
	// Ceiling is the sum of the lot budgets of pending agent lots; Unbounded
	// counts the pending agent lots without a lot budget.
	Ceiling   spec.Tokens
	Unbounded int
	// Budget is the wave budget (after -budget), BudgetUSD the dollar
	// ceiling (after -budget-usd).
	Budget    spec.Tokens
	BudgetUSD spec.USD
	// Spent are the counted tokens and dollars already used (state file);
	// SpentEstimated when some of the dollars were computed at list prices
	// (state.Consumed.CostEstimated).
	Spent          int64
	SpentMicro     int64
	SpentEstimated bool
	// MaxSessions is the session cap; Sessions the most that can run at once
	// (the cap less Holds, and no more than the lots allow).
	MaxSessions, Sessions int
	// LimitsEnforced says how each limit the pending lots set is enforced
	// on this machine (LimitsMachine); nil for an offline plan or when no
	// lot sets one.
	LimitsEnforced []proc.Enforcement `json:"-"`
	// Holds is the number of live holds on the machine (HoldsMachine), each
	// one session slot fewer for the wave; 0 offline.
	Holds int
	// Jobs is the command-lot cap.
	Jobs int
	// SessionsFrom and JobsFrom say where MaxSessions and Jobs come from
	// (CapWave, CapFlag, CapEnv; CapFlag, CapCPUs), so that a plan can
	// name the cap that binds.
	SessionsFrom, JobsFrom CapSource
	// Agents and Commands say how many pending agent lots and command
	// lots can run at once before the caps (MaxSessions, Jobs), and which
	// repositories' parallel bound them.
	Agents, Commands Concurrency
	// CriticalPath is the longest chain of pending work; Estimate the
	// expected duration at the session cap.
	CriticalPath, Estimate time.Duration
}

// CapSource says where a concurrency cap comes from.
type CapSource string

// Cap sources.
const (
	CapWave CapSource = "max_sessions"         // the wave's max_sessions (or its default)
	CapFlag CapSource = "flag"                 // -max-sessions or -jobs
	CapEnv  CapSource = "CADENCE_MAX_SESSIONS" // the environment variable
	CapCPUs CapSource = "CPUs"                 // -jobs's default: the number of CPUs
)

// Concurrency is how many pending lots of one kind (agent lots, command
// lots) can run at once by their number and their repositories' parallel,
// before the kind's cap (Totals.MaxSessions, Totals.Jobs). It counts each
// lot in its own repository (also repositories are not counted) and
// ignores dependencies: an upper bound, as the scheduler's caps are.
type Concurrency struct {
	// Pending is the number of pending lots of the kind.
	Pending int
	// Allowed is the sum over repositories of min(pending lots, parallel),
	// plus the pending lots without a repository.
	Allowed int
	// Repos are the repositories of those lots, in file order.
	Repos []RepoConcurrency
}

// RepoConcurrency is one repository's share of a Concurrency.
type RepoConcurrency struct {
	Name string
	// Parallel is the repository's parallel; Pending its pending lots of
	// the kind. Parallel < Pending means parallel bounds them.
	Parallel, Pending int
}

// At is the most lots of the kind that can run at once under cap.
func (c Concurrency) At(cap int) int { return min(c.Allowed, cap) }

// WarningKind classifies warnings.
type WarningKind string

// Warning kinds.
const (
	WarnNoTestGate   WarningKind = "no-test-gate"
	WarnDirty        WarningKind = "dirty-repo"
	WarnAgentMissing WarningKind = "agent-missing"
	WarnAgentOld     WarningKind = "agent-old"
	WarnOverlap      WarningKind = "overlapping-lots"
	WarnBudget       WarningKind = "budget"
	WarnWaveChanged  WarningKind = "wave-changed"
	WarnStaleState   WarningKind = "stale-state"
	WarnOffline      WarningKind = "offline"
	// WarnNoSandbox: an agent of pending lots runs its sessions without
	// its sandbox (sandbox = false, or missing on this machine).
	WarnNoSandbox WarningKind = "no-sandbox"
	// WarnStepNoSandbox: pending lots' command steps (run, test gates,
	// setups) run outside cadence's step sandbox (sandbox = false on the
	// lot or a repository, or missing on this machine).
	WarnStepNoSandbox WarningKind = "no-step-sandbox"
	// WarnStepSandboxWritable: pending lots' command steps may also write
	// folders outside their worktrees in the step sandbox
	// (sandbox_writable).
	WarnStepSandboxWritable WarningKind = "step-sandbox-writable"
	// WarnNoBrowser: pending lots' UX reviews would get no browser on this
	// machine (its pieces missing, or a review agent without one): they
	// end not verified (docs/ux.md).
	WarnNoBrowser WarningKind = "no-browser"
	// WarnLongCommand: a pending lot's run or a repository's test is too
	// long to be one argument of /bin/sh -c (spec.MaxArgBytes).
	WarnLongCommand WarningKind = "long-command"
	// WarnCadenceChanged: the state was written by another cadence than
	// this one (refuses unless apply -upgrade; pinned).
	WarnCadenceChanged WarningKind = "cadence-changed"
	// WarnAgentChanged: the agent CLI's version is not the one the wave
	// was started with (never refuses; pinned).
	WarnAgentChanged WarningKind = "agent-changed"
	// WarnToolchain: a repository's toolchain file (.nvmrc, .tool-versions,
	// mise.toml) names a version that is not installed, or cannot be read
	// or resolved: its lots are ActionRefused (LotIDs), the others run.
	WarnToolchain WarningKind = "toolchain"
)

// Warning is something the lead should know. Refuses is true when apply
// refuses to start until it is dealt with.
type Warning struct {
	Kind    WarningKind
	Subject string
	Message string
	Refuses bool
	Files   []string
	LotIDs  []string
}
