// Package executor runs a planned wave: it schedules lots by their
// dependencies and priorities under the session, job and repository caps,
// runs each lot's steps (commands, agent sessions, the test gate,
// integration), and records every transition in the state store. It knows
// agents and git only through the small interfaces declared here.
package executor

import (
	"context"
	"github.com/cadence-run/cadence/internal/diskspace"
	"os"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// Agent runs one agent session to its end: an agent.Router, which hands
// the session to the adapter of its agent's kind (executor/agent), or a
// fake in tests.
type Agent interface {
	Run(ctx context.Context, s Session) Outcome
}

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

// Git is what the executor needs of git.
type Git interface {
	// Worktree makes, or finds again, the lot's worktree at dir on branch
	// cadence/<wave>/<lot> started from the repo's base, and returns the
	// base commit it started from (for a branch that existed, its merge
	// base with the base; the lot keeps the one it recorded). fresh says
	// the lot has run no step yet, so a half-made worktree at dir (cadence
	// was killed while making it) holds nothing of value and may be redone.
	Worktree(ctx context.Context, repo *spec.Repo, dir, branch string, fresh bool) (baseSHA string, err error)
	// Head is the worktree's HEAD commit.
	Head(ctx context.Context, dir string) (string, error)
	// Base is the commit of the repository's base branch.
	Base(ctx context.Context, repo *spec.Repo) (string, error)
	// Dirty lists the worktree's uncommitted changes (untracked included).
	Dirty(ctx context.Context, dir string) ([]string, error)
	// Commits lists the commits in from..to, oldest first, as "sha subject".
	Commits(ctx context.Context, dir, from, to string) ([]string, error)
	// Changed lists the files from..to adds or changes, as paths from the
	// repository's root (gitint.Repos.Changed).
	Changed(ctx context.Context, dir, from, to string) ([]string, error)
	// LockIntegration serialises integrations into one repository.
	LockIntegration(ctx context.Context, repo *spec.Repo, wave string) (func(), error)
	// Rebase brings the branch checked out in dir onto the repo's base
	// (changelog-only conflicts resolved by union) and says whether it
	// rewrote it; a real conflict aborts it and is a *gitint.ConflictError.
	Rebase(ctx context.Context, repo *spec.Repo, dir string) (bool, error)
	// RebaseOnto is Rebase onto the commit onto (a merge-queue batch
	// stacks a lot on the lots ahead of it), upstream "" or where the
	// branch's own commits begin (gitint.Repos.RebaseOnto).
	RebaseOnto(ctx context.Context, repo *spec.Repo, dir, onto, upstream string) (bool, error)
	// Unstack puts a lot's branch back at tip, where it was before a
	// batch stacked it, with keep first keeping where it is under the
	// lot's next backup ref, returned (gitint.Repos.Unstack).
	Unstack(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot, tip string, keep bool) (string, error)
	// Tree is the tree id of the worktree's HEAD commit.
	Tree(ctx context.Context, dir string) (string, error)
	// IsAncestor says whether commit a is b or an ancestor of it (false
	// when git cannot say).
	IsAncestor(ctx context.Context, repo *spec.Repo, a, b string) bool
	// Advance moves the base to the branch by fast-forward only and returns
	// the new base commit.
	Advance(ctx context.Context, repo *spec.Repo, branch string) (string, error)
	// Rewind undoes an Advance (base from sha back to old) when a
	// neighbour repository of the lot could not be integrated.
	Rewind(ctx context.Context, repo *spec.Repo, sha, old string) error
	// PatchID identifies the change from..to, rebased or not.
	PatchID(ctx context.Context, repo *spec.Repo, from, to string) (string, error)
	// ResetForReplay puts the lot's worktree at dir back to commit to before
	// a replayed command, keeping what was there under the lot's next
	// backup ref (returned, "" when nothing needed keeping).
	ResetForReplay(ctx context.Context, repo *spec.Repo, dir, wave, lot, to string) (backup string, err error)
	// SetAside keeps a replaced lot's branch (and its worktree's changes)
	// under the lot's next backup ref (returned, "" when there was no
	// branch), then removes the worktree and deletes the branch, so the
	// lot starts afresh from the current base.
	SetAside(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot string) (backup string, err error)
	// RemoveWorktree removes a lot's worktree (the branch is kept).
	RemoveWorktree(ctx context.Context, repo *spec.Repo, dir string) error
	// RemoteState describes the repository's remotes; a change across a
	// session means something was pushed.
	RemoteState(ctx context.Context, repo *spec.Repo) string
	// SessionEnv returns the guard environment of a step (command, test
	// gate, session) working with the repositories: entries added to base
	// that make pushes fail and foreign ref updates refused.
	SessionEnv(ctx context.Context, repos []*spec.Repo, base []string) []string
	// RemoteHosts returns the network hosts of the repositories' remotes
	// (gitint.RemoteHosts): what a sandboxed session may not reach.
	RemoteHosts(ctx context.Context, repos []*spec.Repo) []string

	// Refs reads the repository's guarded refs (refs/heads, refs/tags) but
	// those under the prefix skip, with one git call (gitint.SnapshotRefs).
	Refs(ctx context.Context, repo *spec.Repo, skip string) (gitint.Refs, error)
	// RestoreRefs puts foreign moves of guarded refs back, each by
	// compare-and-swap to its Old value, keeping each foreign value under
	// the lot's next rescue ref first (gitint.RestoreRefs).
	RestoreRefs(ctx context.Context, repo *spec.Repo, wave, lot string, moves []gitint.RefMove) []gitint.PutBack
	// OutsideMoves are the updates of guarded refs made outside the wave
	// (by the lead) since the given time, as the guard's witness recorded
	// them, oldest first (gitint.OutsideMoves).
	OutsideMoves(ctx context.Context, repo *spec.Repo, since time.Time) []gitint.OutsideMove
	// Refusals takes the reports the guard's witness refused since last
	// asked: a step's process that posed as the lead (gitint.Refusals).
	Refusals(ctx context.Context, repo *spec.Repo) []gitint.Refusal
	// CheckoutStatus is the status of the repository's own checkout (the
	// lead's): tracked changes, the index, untracked files, one git
	// status (gitint.ReadCheckoutStatus).
	CheckoutStatus(ctx context.Context, repo *spec.Repo) (gitint.CheckoutStatus, error)
	// WorktreeHead is what the worktree at dir has checked out ("refs/heads/x",
	// or a commit when detached), read from its files (gitint.WorktreeHead).
	WorktreeHead(dir string) (string, error)
	// HeadLogTip is where the newest entry of the HEAD reflog of the
	// worktree at dir left HEAD, "" when there is none (gitint.HeadLogTip).
	HeadLogTip(dir string) string
	// PutOnBranch puts the worktree at dir back on branch, keeping a
	// detached HEAD's commit under the lot's next rescue ref first, and says
	// what it did (gitint.PutOnBranch).
	PutOnBranch(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot string) (string, error)
	// GuardWorktree puts the lot worktree at dir, on branch, under its
	// repository's guard (installed by the Host for the wave), whatever
	// the environment of the git processes working there.
	GuardWorktree(ctx context.Context, repo *spec.Repo, dir, branch string) error
	// SetUpWorktree brings into the new lot worktree at dir of repo what
	// git does not: its submodules (unless b.Submodules is off) and b's
	// copy files (gitint.Repos.SetUpWorktree). The setup command is the
	// executor's.
	SetUpWorktree(ctx context.Context, repo *spec.Repo, dir string, b spec.Bootstrap) error

	// ConfigFiles reads the repository's config files as bytes
	// (gitint.ReadConfigFiles); after the first call per repository, no
	// git process.
	ConfigFiles(ctx context.Context, repo *spec.Repo) (gitint.ConfigFiles, error)
	// RestoreConfig puts back the config files that changed since before,
	// keeping each changed version under the lot's rescue folder
	// (gitint.RestoreConfig). No git process.
	RestoreConfig(before gitint.ConfigFiles, wave, lot string) []gitint.ConfigChange
	// GuardIntact says what is wrong with the repository's guard folder
	// ("" = intact), from its files (gitint.GuardIntact).
	GuardIntact(before gitint.ConfigFiles) string
	// RepairGuard reinstalls a damaged guard and says what was wrong
	// (gitint.RepairGuard).
	RepairGuard(ctx context.Context, repo *spec.Repo) (string, error)
}

// Conflict is what an integration conflict says: the files.
type Conflict interface {
	error
	ConflictFiles() []string
}

// Slots hands out cross-process session slots. Acquire returns, with the
// release, the locked slot file when there is one (nil otherwise): the
// session's supervisor holds it until the session's last process is gone.
type Slots interface {
	Acquire(ctx context.Context, lot string, step state.StepKind) (release func(), lock *os.File, err error)
}

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
	// Briefs renders the prompts of agent sessions.
	Briefs *briefs.Set
	// Env is the environment of every child process.
	Env []string
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
