package state

// Runs says what runs a step of a kind.
type Runs int

const (
	// RunsAgent: an agent session in the lot's worktrees.
	RunsAgent Runs = iota + 1
	// RunsCommand: a shell command in the lot's worktree or folder (a
	// command lot's run step, a repository's test gate).
	RunsCommand
	// RunsQueue: the merge queue (integration); no process of its own.
	RunsQueue
)

// ModelClass says which of the lot's models a step's session uses.
type ModelClass int

const (
	// ModelNone: the step runs no agent session.
	ModelNone ModelClass = iota
	// ModelWrite: the lot's model (spec.Lot.Model).
	ModelWrite
	// ModelReview: the lot's review model (spec.Lot.ReviewModel).
	ModelReview
)

// AgentClass says which of the lot's agents runs a step's session.
type AgentClass int

const (
	// AgentNone: the step runs no agent session.
	AgentNone AgentClass = iota
	// AgentWrite: the lot's agent (spec.Lot.Agent), with ModelWrite.
	AgentWrite
	// AgentReview: the lot's review agent (spec.Lot.ReviewAgent: its
	// review_agent, else its agent), with ModelReview.
	AgentReview
)

// TimeoutClass says which timeout bounds a step.
type TimeoutClass int

const (
	// TimeoutNone: the step has no timeout of its own (integration: each
	// test gate it runs has the repository's).
	TimeoutNone TimeoutClass = iota
	// TimeoutLot: the lot's timeout (spec.Lot.Timeout: a write session's,
	// or a command lot's run step's).
	TimeoutLot
	// TimeoutReview: the lot's review_timeout (spec.Lot.ReviewTimeout).
	TimeoutReview
	// TimeoutTest: the repository's test_timeout (spec.Repo.TestTimeout).
	TimeoutTest
)

// KindInfo is what a step kind is, wherever it is read: the orchestrator
// (what to run, which model and timeout), the planner's renderers, the
// briefs and report schemas, and the agent adapters (through the step
// request). The table below is the one source of these facts.
type KindInfo struct {
	Kind StepKind
	Runs Runs
	// ReadOnly: the step must leave the lot's worktrees as it found them
	// (HEAD and files); a session runs with write tools refused.
	ReadOnly bool
	// Brief is the name of the step's brief template in executor/briefs
	// (without ".tmpl"); "" for steps without a session.
	Brief string
	// ReportSchema is the file name, in package schemas, of the JSON
	// Schema of the session's structured report; "" without a session.
	ReportSchema string
	// Agent is which of the lot's agents runs the session, Model which of
	// its models it is given (the review model is the review agent's).
	Agent   AgentClass
	Model   ModelClass
	Timeout TimeoutClass
	// RecordsVerdict: the step's report carries a review verdict that the
	// journal keeps (state.Step.Conform).
	RecordsVerdict bool
	// Writes: an agent step expected to commit (a write session).
	Writes bool
	// Browser: the session looks at the lot's running application through
	// a browser (the UX review, docs/ux.md): the step runner starts the
	// application (spec.UX) and gives the session agent.Browser.
	Browser bool
}

// kinds is the table of step kinds, in life-cycle order.
var kinds = []KindInfo{
	{Kind: StepPrecheck, Runs: RunsAgent, ReadOnly: true, Brief: "precheck", ReportSchema: "precheck.schema.json", Agent: AgentReview, Model: ModelReview, Timeout: TimeoutReview},
	{Kind: StepImplement, Runs: RunsAgent, Brief: "implement", ReportSchema: "implement.schema.json", Agent: AgentWrite, Model: ModelWrite, Timeout: TimeoutLot, Writes: true},
	{Kind: StepTest, Runs: RunsCommand, Timeout: TimeoutTest},
	{Kind: StepUX, Runs: RunsAgent, ReadOnly: true, Brief: "ux", ReportSchema: "review.schema.json", Agent: AgentReview, Model: ModelReview, Timeout: TimeoutReview, RecordsVerdict: true, Browser: true},
	{Kind: StepReview, Runs: RunsAgent, ReadOnly: true, Brief: "review", ReportSchema: "review.schema.json", Agent: AgentReview, Model: ModelReview, Timeout: TimeoutReview, RecordsVerdict: true},
	{Kind: StepFix, Runs: RunsAgent, Brief: "fix", ReportSchema: "implement.schema.json", Agent: AgentWrite, Model: ModelWrite, Timeout: TimeoutLot, Writes: true},
	{Kind: StepFixMinors, Runs: RunsAgent, Brief: "fix-minors", ReportSchema: "implement.schema.json", Agent: AgentWrite, Model: ModelWrite, Timeout: TimeoutLot, Writes: true},
	{Kind: StepRecheck, Runs: RunsAgent, ReadOnly: true, Brief: "review-recheck", ReportSchema: "review.schema.json", Agent: AgentReview, Model: ModelReview, Timeout: TimeoutReview, RecordsVerdict: true},
	{Kind: StepIntegrate, Runs: RunsQueue},
	{Kind: StepRun, Runs: RunsCommand, Timeout: TimeoutLot},
}

// Kinds returns the table of step kinds, in life-cycle order (a copy).
func Kinds() []KindInfo { return append([]KindInfo(nil), kinds...) }

// Info returns what kind is; ok is false for a kind not in the table.
func Info(kind StepKind) (KindInfo, bool) {
	for _, k := range kinds {
		if k.Kind == kind {
			return k, true
		}
	}
	return KindInfo{}, false
}

// Session reports whether a step of the kind runs an agent session.
func (k StepKind) Session() bool {
	i, _ := Info(k)
	return i.Runs == RunsAgent
}

// ReadOnly reports whether a step of the kind must leave the lot's
// worktrees as it found them.
func (k StepKind) ReadOnly() bool {
	i, _ := Info(k)
	return i.ReadOnly
}

// ReportSchema returns the file name, in package schemas, of the report
// schema of a session of the kind ("" for a kind without a session).
func (k StepKind) ReportSchema() string {
	i, _ := Info(k)
	return i.ReportSchema
}
