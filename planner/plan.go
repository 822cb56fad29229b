// Package planner turns a decoded wave (spec.Config), its state file and facts
// about the machine into an immutable, versioned Plan: what apply would do to
// each lot, in which order, at what cost and with which warnings. It never
// starts a process or touches git: machine facts arrive through the Machine
// interface, and a nil Machine means an offline plan.
package planner

import (
	"time"

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
)

// Actions lists every action in display order.
var Actions = []Action{ActionRun, ActionResume, ActionReplace, ActionAnswer, ActionHeld, ActionBlocked, ActionDone}

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
	}
	return " "
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
	// Agent is what was found of the agent CLI (zero when offline or unused).
	Agent AgentFacts
	// WaveDigest and StateDigest identify the inputs, for saved plans.
	WaveDigest, StateDigest string
	// Targets and Replace echo -target and -replace.
	Targets, Replace []string
	// ResetAt is the recorded reset time of the usage limit that suspended
	// the last run (the state's reset_at), nil when none is recorded; OnQuota
	// is the wave's on_quota, what apply does before that time.
	ResetAt *time.Time
	OnQuota spec.OnQuota
}

// Step is one planned step of a lot.
type Step struct {
	// Kind is the step kind; Model the model it uses ("" for commands).
	Kind  state.StepKind
	Model string
	// Max is the most times the step may run (fix passes); 0 means once.
	Max int
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
	// Reason explains blocked, held and answer actions.
	Reason string
	// BlockedBy are the lots that block this one (ActionBlocked).
	BlockedBy []string
	Repo      string
	Also      []string
	DependsOn []string
	Steps     []Step
	Budget    spec.Tokens
	Estimate  time.Duration
	// EstimateSet is false when Estimate is the built-in default.
	EstimateSet bool
	// Remaining is the longest path of pending work starting at this lot.
	Remaining time.Duration
	// Spent are the counted tokens the lot has used so far.
	Spent int64
}

// RepoPlan is the plan's view of one repository.
type RepoPlan struct {
	Name, Path, Base string
	// BaseSHA is the base branch's commit when checked ("" offline).
	BaseSHA string
	Test    string
	// ProbableTest is the likely test command when Test is empty.
	ProbableTest string
	Parallel     int
	// Lots is the number of lots whose own repo this is.
	Lots int
	// Pushes says whether a push from the repository's pending lots is
	// prevented or only detected (PushesNone when no pending lot works in
	// it); PushesReason says why it is not prevented: "command lot gen;
	// agent claude: sandbox = false" ("" when prevented).
	Pushes       Pushes
	PushesReason string
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
	// MaxSessions is the session cap; Sessions the most that can run at once.
	MaxSessions, Sessions int
	// Jobs is the command-lot cap.
	Jobs int
	// CriticalPath is the longest chain of pending work; Estimate the
	// expected duration at the session cap.
	CriticalPath, Estimate time.Duration
}

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
	// WarnLongCommand: a pending lot's run or a repository's test is too
	// long to be one argument of /bin/sh -c (spec.MaxArgBytes).
	WarnLongCommand WarningKind = "long-command"
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
