// Package mergequeue integrates finished lots into their repositories'
// bases (docs/integration.md, Merge queue): a lot is rebased onto its
// base, its test gate runs on the rebased tree unless that tree's result
// is known, and the base advances by fast-forward. Lots of one repository
// that reach integration together integrate as one batch, the way bors
// does (batch.go); a lot with neighbour repositories integrates all of
// them or none, through an intent recorded before the first base moves
// (intent.go); what a killed cadence left half done is put right before
// the lot runs again (Settle).
//
// The queue owns these fields of the state (internal/state) and is their
// only writer: State.Gates (the gate results, keyed by tree, command and
// environment), Lot.Integrating (the intent) and Lot.Stacked (a lot
// stacked on lots ahead of it in a batch). Settle also records a lot whose
// cut-short integration it completed (Lot.IntegratedSHA, Lot.PatchID and
// an integrate step) or could not put right (interrupted, with the
// cause). The integrate step of a running lot is the orchestrator's: it
// begins it, calls Integrate, and records the Result; an Integrated one
// (Lot.IntegratedSHA, Lot.PatchID) in the same write as the step's end and
// as clearing Lot.Integrating and Lot.Stacked, so that no crash leaves a
// lot integrated with an intent or a stack still recorded.
//
// The queue knows git, the test gates and the step guards through the
// small interfaces below, which the orchestrator implements; it imports
// neither the orchestrator nor the step runner.
package mergequeue

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Failpoints of the queue (tests only): Config.Failpoint is called with
// each name at its point, and kills cadence when the name is the run's.
const (
	// FailBetweenRepos: right after the first base of a lot with
	// neighbour repositories advanced, before the next one.
	FailBetweenRepos = "integrate-between-repos"
	// FailBatchStacked: once a batch of more than one lot is rebased in
	// order (the later lots stacked on lots not on the base).
	FailBatchStacked = "batch-stacked"
	// FailBatchAdvanced: once the base advanced over a batch, before its
	// lots' integration is recorded.
	FailBatchAdvanced = "batch-advanced"
)

// Git is what the queue needs of git (gitint.Repos implements it).
type Git interface {
	// LockIntegration serialises integrations into one repository.
	LockIntegration(ctx context.Context, repo *spec.Repo, wave string) (func(), error)
	// Base is the commit of the repository's base branch.
	Base(ctx context.Context, repo *spec.Repo) (string, error)
	// Head is the worktree's HEAD commit.
	Head(ctx context.Context, dir string) (string, error)
	// Tree is the tree id of the worktree's HEAD commit.
	Tree(ctx context.Context, dir string) (string, error)
	// TreeOf is the tree id of a commit of the repository.
	TreeOf(ctx context.Context, repo *spec.Repo, commit string) (string, error)
	// Rebase brings the branch checked out in dir onto the repo's base
	// and says whether it rewrote it; a conflict aborts it and is an
	// error with ConflictFiles (*gitint.ConflictError).
	Rebase(ctx context.Context, repo *spec.Repo, dir string) (bool, error)
	// RebaseOnto is Rebase onto the commit onto.
	RebaseOnto(ctx context.Context, repo *spec.Repo, dir, onto, upstream string) (bool, error)
	// Unstack puts a lot's branch back at tip, with keep first keeping
	// where it is under the lot's next backup ref, returned.
	Unstack(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot, tip string, keep bool) (string, error)
	// IsAncestor says whether commit a is b or an ancestor of it.
	IsAncestor(ctx context.Context, repo *spec.Repo, a, b string) bool
	// Advance moves the base to the branch by fast-forward only and
	// returns the new base commit.
	Advance(ctx context.Context, repo *spec.Repo, branch, want string) (string, error)
	// Rewind moves the base from sha back to old.
	Rewind(ctx context.Context, repo *spec.Repo, sha, old string) error
	// PatchID identifies the change from..to, rebased or not.
	PatchID(ctx context.Context, repo *spec.Repo, from, to string) (string, error)
	// Refs reads the repository's guarded refs but those under skip.
	Refs(ctx context.Context, repo *spec.Repo, skip string) (gitint.Refs, error)
}

// RebaseConflict is what a rebase conflict says: the files
// (*gitint.ConflictError implements it).
type RebaseConflict interface {
	error
	ConflictFiles() []string
}

// GateStatus is how a test gate run ended.
type GateStatus int

const (
	GateGreen       GateStatus = iota // the command exited 0
	GateRed                           // it did not (GateRun.Cause: its last lines)
	GateIncident                      // it moved a guarded ref (GateRun.Incident)
	GateInterrupted                   // cadence stopped it (GateRun.Cause)
	GateHeld                          // it changed the lead's checkout: the lot is held (GateRun.Cause)
)

// GateRun is a test gate run's result.
type GateRun struct {
	Status GateStatus
	Cause  string
	// Incident is the lot's outcome when Status is GateIncident.
	Incident state.Outcome
}

// Gates runs test gates.
type Gates interface {
	// Test runs repo's test gate in its worktree as a test step of lot,
	// on the commit checked out there (a gate that moves HEAD is red).
	// The error is a failure to record state.
	Test(ctx context.Context, lot string, repo Repo) (GateRun, error)
}

// Guard is what the queue tells the step guards about cadence's own moves
// (docs/integration.md, Guards).
type Guard interface {
	// OwnMove runs move, cadence's own move of repo's guarded refs for
	// lot (a base's advance or rewind), and records what it returns (a
	// zero RefMove records nothing), so that no step's guard takes it
	// for a foreign one.
	OwnMove(repo *spec.Repo, lot string, move func() gitint.RefMove)
	// Moving marks lot active while cadence moves its branch itself (a
	// rebase, a put-back), until done is called.
	Moving(lot string) (done func())
	// CheckTips checks that lot's branches are where its last step left
	// them: a move made since is put back and is an incident.
	CheckTips(ctx context.Context, lot string)
	// CheckRemotes compares repos' remotes with their last reading: a
	// change (a push) is an incident that stops the wave, recorded with
	// before ("before the integration of lot a") and returned with the
	// lots whose command or test steps ran there since the last reading;
	// "" when nothing changed.
	CheckRemotes(ctx context.Context, before string, repos []*spec.Repo) (string, []string)
}

// Config is what a Queue works with.
type Config struct {
	Git   Git
	Gates Gates
	Guard Guard
	// Store is the wave's state; the queue writes the fields the package
	// doc names.
	Store *state.Store
	// Spec is the wave file: the wave's name, its repositories.
	Spec *spec.Config
	// Note reports a progress line of lot (its step, or "").
	Note func(lot string, step state.StepKind, msg string)
	// Now is the clock of the state's records; Began is when the run
	// began (a red gate result counts only within the run that recorded
	// it).
	Now   func() time.Time
	Began time.Time
	// Run is the run's context: a repository's leader, a goroutine of the
	// run and not of the lot that started it, batches under it.
	Run func() context.Context
	// Failpoint is called at each of the failpoints above (nil: none).
	Failpoint func(name string)
}

// Queue is the merge queues of one run, one per repository.
type Queue struct {
	c      Config
	mu     sync.Mutex
	queues map[*spec.Repo]*repoQueue
}

// New is the run's queue. Git, Gates, Guard, Store and Spec are
// required; Note, Now, Run and Failpoint default to nothing, time.Now,
// context.Background and nothing.
func New(c Config) *Queue {
	if c.Note == nil {
		c.Note = func(string, state.StepKind, string) {}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Run == nil {
		c.Run = context.Background
	}
	if c.Failpoint == nil {
		c.Failpoint = func(string) {}
	}
	return &Queue{c: c}
}

// Repo is one repository of a lot: its wave-file block, the lot's
// worktree of it, and what its steps record.
type Repo struct {
	Spec     *spec.Repo
	Worktree string
	// Label is "" for the lot's own repository, else the neighbour's
	// name, as its steps record it (state.Step.Repo).
	Label string
	// GateEnv is the environment the repository's test gate gets from the
	// lead and the wave file (not cadence's per-step variables): with
	// Spec.Test, what its results are keyed by (GateDigest).
	GateEnv []string
}

// Lot is a lot that integrates: data, no handle on the orchestrator.
type Lot struct {
	ID string
	// Branch is the lot's branch, the same name in every repository.
	Branch string
	// Repos are its repositories, its own first, then its neighbours in
	// the wave file's order.
	Repos []Repo
	// Batchable says the lot goes through its repository's queue
	// (Batchable); else it integrates alone, under the same lock.
	Batchable bool
	// Coming says the lot counted itself coming (ComingUp): its
	// Integrate counts it in.
	Coming bool
	// Replace says the plan replaces the lot (-replace): Settle drops
	// what a cut-short integration left instead of completing it.
	Replace bool
}

func (l Lot) own() Repo { return l.Repos[0] }

// Batchable says whether a lot with repos goes through its repository's
// queue: its own repository alone (an integration across repositories
// is all or nothing, intent.go), a test gate, merge_queue not false, and
// no earlier integration recorded (state.Lot.PatchID: the idempotent
// check of a replaced lot needs the lot alone).
func (q *Queue) Batchable(lot string, repos []*spec.Repo) bool {
	if len(repos) != 1 || repos[0] == nil || repos[0].Test == "" || repos[0].NoMergeQueue {
		return false
	}
	prior := ""
	q.c.Store.View(func(st *state.State) {
		if l := st.Lots[lot]; l != nil {
			prior = l.PatchID
		}
	})
	return prior == ""
}

// Kind is what became of a lot's integration.
type Kind int

const (
	// Integrated: the base holds the lot (Result.SHA, its own commits
	// from Result.From; Result.Batch names the lots integrated with it).
	Integrated Kind = iota
	// AlreadyOn: the lot's change is on the base already (an earlier
	// integration's patch-id, a rebased branch that adds nothing);
	// Result.SHA is the base.
	AlreadyOn
	// Conflict: the rebase onto the base conflicts in Result.Files of
	// Result.Repo (branch, base and worktree left as they were).
	Conflict
	// Red: the test gate is red on the rebased branch (Result.Cause).
	Red
	// Waits: a reason outside the lot (Result.Cause): it stays at
	// integrate.
	Waits
	// Interrupted: cadence is stopping, or the lot is held (Result.Cause).
	Interrupted
	// Incident: a gate moved a guarded ref (Result.Incident).
	Incident
	// GateStopped: the lot's own gate run was cut short (Result.Cause);
	// its test step records why, and the integrate step ends with the
	// lot's interruption.
	GateStopped

	// again and held are the batch's own: the lot goes to the next batch;
	// a gate changed the lead's checkout (the batch is abandoned).
	again
	held
)

// Result is a lot's integration result.
type Result struct {
	Kind  Kind
	Cause string
	// SHA is the lot's integrated commit (Integrated) or the base
	// (AlreadyOn); From is where its own commits begin, for its patch-id.
	SHA, From string
	// PatchID identifies the lot's change From..SHA in its own repository
	// (Integrated; "" when git could not say): recorded so that a
	// replaced lot is not integrated twice.
	PatchID string
	Batch   []string
	// Note is what the integrate step's end says (Integrated, AlreadyOn).
	Note string
	// Repo and Files are the conflict's (Conflict).
	Repo  *spec.Repo
	Files []string
	// Incident is the lot's outcome (Incident); lot names the lot whose
	// gate found it (within a batch).
	Incident state.Outcome
	lot      string
	// pushed: the incident is a push found before the integration.
	pushed bool
	err    error // a failure to record state, within a batch
}

// pushed is the result of an integration of lot before which its
// repositories' remotes changed (msg): an incident that fails the lot
// when its command or test steps ran there since they were last compared
// (among lots): it may have pushed, and stays held until the lead
// replaces it (docs/integration.md, Guards); else the lot waits at
// integrate.
func pushed(lot, msg string, lots []string) Result {
	if !slices.Contains(lots, lot) {
		return Result{Kind: Waits, Cause: "incident: " + msg}
	}
	detail := "incident: " + msg + "; the lot is held: it is not integrated until you apply with -replace " + lot + " (its branch is set aside, nothing lost)"
	return Result{Kind: Incident, lot: lot, pushed: true,
		Incident: state.Outcome{Kind: state.OutcomeFailed, Status: state.StepFailed, Detail: detail}}
}

// wave is the wave's name.
func (q *Queue) wave() string { return q.c.Spec.Wave.Name }

// stopped is the result of a failure outside the lots: interrupted when
// cadence is stopping, else the lots wait at integrate with cause.
func stopped(ctx context.Context, cause string) Result {
	if ctx.Err() != nil {
		return Result{Kind: Interrupted, Cause: "stopped by cadence"}
	}
	return Result{Kind: Waits, Cause: cause}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
