// Package spec decodes wave files (HCL native syntax *.hcl and HCL JSON syntax
// *.hcl.json) into a typed, fully resolved Config.
//
// Decoding happens in two passes, in the manner of Terraform's configs package:
// the first pass decodes every block and evaluates every value attribute, the
// second resolves the references between blocks (lot.X, repo.Y, agent.Z) and
// checks the dependency graph. Every problem is an hcl.Diagnostic carrying the
// source range, and all of them are reported in one run. The package never
// starts a process and never runs git; file() and templatefile() read files
// relative to the wave file's folder, and only inside its folder tree or git
// work tree (readfile.go). Values from env() and sensitive variables carry
// the Sensitive mark; Lot.Sensitive and Repo.Sensitive name the attributes
// they reached, for plans to show as Redacted (sensitive.go).
package spec

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Config is a decoded, resolved wave file.
type Config struct {
	// File is the path of the wave file as it was given.
	File string
	// Dir is the folder of the wave file; relative paths inside the file are
	// relative to it.
	Dir string
	// Wave holds the settings of the wave block.
	Wave Wave
	// Agents are the agent definitions, the built-in "claude" first, then the
	// declared ones in file order.
	Agents []*Agent
	// Repos are the repositories in file order.
	Repos []*Repo
	// Lots are the lots in file order.
	Lots []*Lot
	// Executor is the executor block: where steps run (docs/remote.md);
	// nil when the wave has none, and every step runs on this machine.
	Executor *Executor
	// Env is what env() returned while the file loaded, by variable name
	// (nil when the file calls no env()), for a saved plan to record: by
	// the digest of each value (internal/state.Digest), as every env()
	// value is sensitive.
	Env map[string]EnvValue
	// SensitiveVars are the variables declared with sensitive = true, by
	// name (nil when there are none): a saved plan must not hold their
	// values (-var name=value) in clear.
	SensitiveVars map[string]bool
	// Variables are the names of the declared variables, in file order:
	// a CADENCE_VAR_ of another name is ignored, and a saved plan records
	// only these (nil when the wave declares none).
	Variables []string
	// FilesRead are the files file() and templatefile() read while the file
	// loaded, and VarFilesRead the var files: absolute path to the digest of
	// the bytes read ("sha256:" and hex), for a saved plan to record.
	FilesRead, VarFilesRead map[string]string

	agentsByName map[string]*Agent
	reposByName  map[string]*Repo
	lotsByID     map[string]*Lot
}

// Lot returns the lot with the given id, or nil.
func (c *Config) Lot(id string) *Lot { return c.lotsByID[id] }

// Repo returns the repository with the given name, or nil.
func (c *Config) Repo(name string) *Repo { return c.reposByName[name] }

// Agent returns the agent with the given name, or nil.
func (c *Config) Agent(name string) *Agent { return c.agentsByName[name] }

// OnQuota says what a wave does when the agent reports a usage or rate limit.
type OnQuota string

const (
	// OnQuotaSuspend suspends the wave with the reset time (apply exits 3).
	OnQuotaSuspend OnQuota = "suspend"
	// OnQuotaWait starts no new session until the reset time, then goes on.
	OnQuotaWait OnQuota = "wait"
)

// OnConflict says what integration does when a rebase conflicts.
type OnConflict string

const (
	// OnConflictHandBack aborts the rebase and hands the lot back to the lead.
	OnConflictHandBack OnConflict = "hand-back"
	// OnConflictFix runs a fresh fix session to resolve the conflict, then
	// retries integration once.
	OnConflictFix OnConflict = "fix"
)

// Wave is the wave block: the name and the wave-wide limits.
type Wave struct {
	// Name is the wave's label; it names branches and folders.
	Name string
	// Budget is the wave's ceiling in counted tokens; 0 means no ceiling.
	Budget Tokens
	// BudgetUSD is the optional second ceiling; 0 means none.
	BudgetUSD USD
	// MaxSessions is the number of agent sessions at once on this machine,
	// shared by every cadence process.
	MaxSessions int
	// OnQuota is what happens on a usage limit.
	OnQuota OnQuota
	// Templates is the folder of brief templates overriding the built-in ones
	// (absolute, or empty for none).
	Templates string
	// Worktrees is the folder that holds the lots' worktrees (absolute;
	// empty: the default, $CADENCE_HOME/worktrees). It should be outside
	// every repository (docs/integration.md, "Worktrees and branches").
	Worktrees string
	// LogLimit is the wave's log_limit (0: not written; lots then keep
	// DefaultLogLimit unless their repo or they set one).
	LogLimit Bytes
	// DeclRange is the range of the block header.
	DeclRange hcl.Range
	// BudgetRange is the range of the budget attribute's value, if set.
	BudgetRange hcl.Range
}

// Agent is an agent CLI definition. The built-in "claude" always exists; an
// agent block with that name changes some of its settings. Kind picks the
// adapter that runs its sessions (executor/agent). spec reads the
// attributes every kind takes (AgentCommon); the rest of the block is the
// kind's own, kept as Body and decoded by the kind's adapter into Settings.
type Agent struct {
	// Name is the block label.
	Name string
	// Kind is the kind of agent CLI: AgentKindClaude unless the block sets
	// kind; one of Options.AgentKinds.
	Kind string
	// Command is the executable: the block's command, else the kind's
	// adapter's default (Options.AgentCommand); the adapter may override
	// it for the agent named like the kind (CADENCE_CLAUDE_BIN for
	// "claude").
	Command string
	// KindRange is the range of the kind attribute's value (empty when the
	// block sets none): where a problem with the kind is reported.
	KindRange hcl.Range
	// FallbackModel is the fallback_model of the agent's lots that set
	// none (Lot.FallbackModel); "" for none.
	FallbackModel string
	// Body is the agent block's body past the common attributes: the
	// kind's own settings, for its adapter to decode with EvalContext (the
	// wave's variables, locals and functions). Nil for the built-in agent.
	Body        hcl.Body
	EvalContext *hcl.EvalContext
	// Settings are the kind's own settings as its adapter decoded them
	// from Body (Options.AgentSettings); nil when the loader was given no
	// decoder.
	Settings AgentSettings
	// NoSandbox is set by `sandbox = false`: the agent's sessions run
	// without the agent CLI's own OS sandbox even where the machine has one
	// (pushes are then only detected, not prevented; docs/integration.md,
	// Guards). The
	// default (false) is to use the sandbox wherever it works.
	NoSandbox bool
	// Sensitive are the attributes whose values derive from a sensitive
	// value ("command", "append_system_prompt", ...): a plan shows
	// Redacted for what they give.
	Sensitive Fields
	// Builtin is true when the agent was not declared in the file.
	Builtin bool
	// DeclRange is the range of the block header (empty for a built-in).
	DeclRange hcl.Range
}

// AgentSettings are an agent kind's own settings, decoded by the kind's
// adapter (executor/agent) from the agent block's body past the common
// attributes. The interface holds what the rest of cadence asks of them;
// the adapter reads the rest from its own type.
type AgentSettings interface {
	// SandboxBypass says how the settings let the agent's sessions write
	// outside the worktrees even with its OS sandbox on, as the attribute,
	// its value and why ("permission_mode = \"bypassPermissions\" (its file
	// tools run outside the sandbox, not confined to the worktrees)"); ""
	// when they do not. A plan then reports pushes as detected, not
	// prevented, and the executor guards the checkout around its sessions
	// (docs/integration.md, Guards).
	SandboxBypass() string
}

// SandboxBypass is a's Settings' SandboxBypass, "" when a or its settings
// are nil.
func (a *Agent) SandboxBypass() string {
	if a == nil || a.Settings == nil {
		return ""
	}
	return a.Settings.SandboxBypass()
}

// DefaultModel is the model a's own settings give its sessions when a lot
// names none (settings with a DefaultModel method, such as the codex
// kind's model attribute); "" when they give none (the CLI's default).
func (a *Agent) DefaultModel() string {
	if a == nil {
		return ""
	}
	if m, ok := a.Settings.(interface{ DefaultModel() string }); ok {
		return m.DefaultModel()
	}
	return ""
}

// Repo is a git repository that lots work in.
type Repo struct {
	// Name is the block label.
	Name string
	// Path is the repository's folder, absolute (resolved against Config.Dir).
	Path string
	// RawPath is the path as written in the file.
	RawPath string
	// Base is the branch lots start from and are integrated into.
	Base string
	// Test is the test gate command; empty when none is configured.
	Test string
	// LogLimit is the repo's log_limit for its lots (0: not written).
	LogLimit Bytes
	// Parallel is the number of this repo's lots at once.
	Parallel int
	// Changelog is the changelog file whose [Unreleased] additions merge by
	// union; empty for none.
	Changelog string
	// NoMergeQueue turns integration batches off (merge_queue = false):
	// every lot is rebased, gated and integrated alone, one after the
	// other. The default (false) lets lots of this repository that are
	// ready together integrate as one batch (executor/batch.go;
	// docs/integration.md, "Merge queue").
	NoMergeQueue bool
	// NoSandbox is set by `sandbox = false`: the command steps of the
	// lots that use the repository (command lots' run, test gates,
	// worktree setups) run outside cadence's step sandbox
	// (docs/integration.md, Guards).
	NoSandbox bool
	// SandboxWritable are the folders (absolute, each an existing folder
	// outside every repository's checkout and git dir) that the command
	// steps of the lots using the repository may also write in the step
	// sandbox (sandbox_writable; Lot.StepWritable merges them).
	SandboxWritable []string
	// Env is the repo's own env and path_prepend (Lot.Env merges them).
	Env Env
	// TestTimeout is the test gate's timeout (DefaultTestTimeout unless
	// written); 0 means none (test_timeout = "0").
	TestTimeout time.Duration
	// Limits are the repo's own limits (Lot.Limits merges them).
	Limits Limits
	// Bootstrap is what each new worktree of the repository gets (its
	// submodules, copy and setup attributes): a neighbour's worktree gets
	// this; a lot's own worktree gets Lot.Bootstrap.
	Bootstrap Bootstrap
	// UX is the repo's ux block (nil: none), its visible lots' unless a
	// lot has its own.
	UX *UX
	// Sensitive are the attributes whose values derive from a sensitive
	// value (env(), a sensitive variable): a plan shows them as Redacted.
	Sensitive Fields
	// DeclRange is the range of the block header.
	DeclRange hcl.Range
}

// LotKind tells agent lots from command lots.
type LotKind int

const (
	// AgentLot is a lot with a brief, run by agent sessions.
	AgentLot LotKind = iota
	// CommandLot is a lot with a run command, Make-style.
	CommandLot
)

// String returns "agent" or "command".
func (k LotKind) String() string {
	if k == CommandLot {
		return "command"
	}
	return "agent"
}

// Lot is one unit of work. Its settings are effective values: the lot's own,
// else the defaults block's, else the built-in defaults.
type Lot struct {
	// ID is the lot's label.
	ID string
	// Index is the lot's position in file order.
	Index int
	// Kind says whether the lot has a brief or a run command.
	Kind LotKind
	// Title is a short human title (the id when not given).
	Title string
	// Brief is the agent brief (agent lots).
	Brief string
	// Run is the shell command (command lots).
	Run string
	// Repo is the lot's repository; nil only for a command lot without one.
	Repo *Repo
	// Also are the neighbour repositories the lot edits too.
	Also []*Repo
	// DependsOn are the lots that must be done before this one, in the order
	// written.
	DependsOn []*Lot
	// DependsOnRanges are the source ranges of the DependsOn elements.
	DependsOnRanges []hcl.Range
	// Agent is the agent CLI that runs the lot's write sessions
	// (implement, fix, fix-minors; agent lots): its agent, else the
	// defaults', else the built-in claude.
	Agent *Agent
	// ReviewAgent is the agent CLI that runs its read-only sessions
	// (precheck, review, review-recheck): its review_agent, else the
	// defaults', else Agent. The step-kind table's agent class says which
	// runs a step (internal/state/kinds.go).
	ReviewAgent *Agent
	// Model is the model of write steps (implement, fix): model, else
	// DefaultModel for an agent of kind claude, else "" (the agent's own
	// default).
	Model string
	// ReviewModel is ReviewAgent's model for read-only steps (precheck,
	// review): review_model, else DefaultReviewModel for an agent of kind
	// claude, else "".
	ReviewModel string
	// FallbackModel is the model the agent CLI switches to when the
	// step's model is overloaded (claude: --fallback-model): the lot's
	// fallback_model, else the defaults', else its agent's; "" for none.
	// ReviewFallbackModel is the read-only steps': the same when written,
	// else ReviewAgent's.
	FallbackModel, ReviewFallbackModel string
	// FixPasses is the most fix passes after a non-conform review.
	FixPasses int
	// Timeout is the write step timeout (agent lots), or the run step's
	// and the worktree setup's (command lots); 0 means none.
	Timeout time.Duration
	// ReviewTimeout is the read-only step timeout; 0 means none.
	ReviewTimeout time.Duration
	// Limits bound each step of the lot: its own limits over its repo's
	// over the defaults block's, per limit.
	Limits Limits
	// NoSandbox is set by the lot's `sandbox = false`: its command steps
	// (its run, its test gates, its worktrees' setups) run outside
	// cadence's step sandbox; StepSandboxOff also counts its repositories'.
	NoSandbox bool
	// SandboxWritable are the lot's own sandbox_writable folders (as
	// Repo.SandboxWritable); StepWritable adds its repositories'.
	SandboxWritable []string
	// Budget is the lot's ceiling in counted tokens; 0 means none.
	Budget Tokens
	// Estimate is the expected duration, for critical-path ordering.
	Estimate time.Duration
	// EstimateSet is true when Estimate was written (in the lot or defaults).
	EstimateSet bool
	// Precheck runs a read-only "is this already done?" step first.
	Precheck bool
	// Small lots skip the minor-findings pass.
	Small bool
	// Visible is the lot's visible attribute: its work changes what users
	// see, so it gets a UX review (UXReview) after each write step.
	Visible bool
	// NoUX is set by the lot's ux = false: no UX review, visible or not.
	NoUX bool
	// UX is the lot's ux block, else its repo's (nil: none).
	UX *UX
	// OnConflict is what integration does on a rebase conflict.
	OnConflict OnConflict
	// LogLimit bounds each of the lot's steps' captured output (a
	// command's, a test gate's or a worktree setup's log): the lot's
	// log_limit, else its repo's, else the wave's, else
	// DefaultLogLimit.
	LogLimit Bytes
	// Env is the environment of the lot's child processes (sessions, test
	// gates, its run command): its own env over its repo's over the
	// defaults block's, per name; path_prepend entries the lot's, then the
	// repo's, then the defaults' (agent and command lots alike).
	Env Env
	// Bootstrap is what the lot's own worktree gets when it is made: its
	// repository's submodules, copy and setup, each replaced by the lot's
	// own attribute when written (zero for a lot without a repo).
	Bootstrap Bootstrap
	// Sensitive are the attributes whose values derive from a sensitive
	// value (env(), a sensitive variable), the defaults block's included:
	// a plan shows them as Redacted, a session still gets the real value.
	Sensitive Fields
	// DeclRange is the range of the block header.
	DeclRange hcl.Range
}

// Repos returns the lot's own repository followed by its neighbours.
func (l *Lot) Repos() []*Repo {
	if l.Repo == nil {
		return l.Also
	}
	return append([]*Repo{l.Repo}, l.Also...)
}

// StepSandboxOff says why the lot's command steps (its run, test gates and
// worktree setups) run outside cadence's step sandbox by the wave file
// ("lot a has sandbox = false", "repo app has sandbox = false"), "" when
// the wave file leaves it on.
func (l *Lot) StepSandboxOff() string {
	if l.NoSandbox {
		return "lot " + l.ID + " has sandbox = false"
	}
	for _, r := range l.Repos() {
		if r.NoSandbox {
			return "repo " + r.Name + " has sandbox = false"
		}
	}
	return ""
}
