// Package step runs a lot's steps: the seam the orchestrator (executor)
// runs every step through (Runner, with Request, Result and Event, data
// only), and Local, the runner of this machine: worktrees' git, agent
// sessions through the agent router, command lots and test gates through
// the step supervisor, read-only checks, neighbour repositories, step
// logs, and the guards around every step (executor/step/guard). The
// orchestrator decides what runs next and writes the journal: a step's
// begin from its Request, its end from its Result (docs/architecture.md,
// The step seam).
package step

import (
	"context"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Runner runs steps. Every method takes and returns data only: no file,
// callback or closure crosses it, so that a runner on another machine
// can implement it by sending these values over the wire. The caller
// (the orchestrator) owns the journal; a Runner writes none of it.
type Runner interface {
	// RunStep runs one step to its end and says how it ended. It emits
	// what happens meanwhile on events, in order (EventBegin before
	// anything of the step runs, then EventStarted once its process
	// runs), and emits nothing once it returned. When emitting EventBegin
	// fails (the caller could not record the step's begin), the step does
	// not start: the Result is Unstarted.
	// Nothing the step started is left running when it returns. The
	// error is for a request the runner cannot read (an unknown
	// repository); how the step itself ended, whatever it was, is in the
	// Result.
	RunStep(ctx context.Context, req Request, events Events) (Result, error)
	// ResetForReplay puts the lot's worktree of repo back at commit to
	// before its command step is replayed, keeping what an earlier
	// attempt left there under the lot's next backup ref (returned, ""
	// when nothing needed keeping).
	ResetForReplay(ctx context.Context, lot Lot, repo, to string) (backup string, err error)
	// Prepare makes, or finds again, the lot's worktrees, each on the
	// lot's branch under its repository's guard, and says where each
	// branch started (Prepared).
	Prepare(ctx context.Context, req PrepareRequest) (Prepared, error)
	// SetAside keeps the branch of a lot to be replaced (and its
	// worktrees' changes) under the lot's next backup ref in each of its
	// repositories, then removes its worktrees and branches, so the lot
	// starts afresh from the base. It returns the backup refs made, by
	// repository name.
	SetAside(ctx context.Context, lot Lot) (map[string]string, error)
	// RemoveWorktrees removes the lot's worktrees (its branches are kept).
	RemoveWorktrees(ctx context.Context, lot Lot) error
	// Look reads the lot's worktrees, what the orchestrator's judgement
	// needs of them (Looked, one per repository of req, in order).
	Look(ctx context.Context, req LookRequest) ([]Looked, error)

	// GuardEnv is the environment that puts a step's git under the guard
	// of every repository of the wave on the runner's machine (pushes
	// fail, foreign ref updates are refused): the orchestrator adds it to
	// each step's Env, under the lot's own entries' PATH.
	GuardEnv(ctx context.Context) ([]string, error)

	// EndLeftovers ends what an earlier apply of the wave (waveID) left
	// running on the runner's machine, before anything is replayed.
	EndLeftovers(ctx context.Context, waveID string) (Leftovers, error)
	// Leftover says whether a process of an earlier apply's step of a lot
	// is still alive (then the lot must not run now).
	Leftover(ctx context.Context, req LeftoverRequest) (Leftover, error)
	// Recount counts what a session that ran when its cadence was killed
	// spent (ok false: it cannot be told).
	Recount(ctx context.Context, req RecountRequest) (spent agent.Spent, ok bool, err error)
	// Tidy removes what sessions killed with their cadence left in the
	// worktrees (made before before) and returns the paths removed.
	Tidy(ctx context.Context, worktrees []string, before time.Time) ([]string, error)
}

// PrepareRequest asks for the lot's worktrees. Fresh says the lot has run
// no step yet, so a half-made worktree (cadence was killed while making
// it) holds nothing of value and may be made again.
type PrepareRequest struct {
	Lot
	Fresh bool
}

// Prepared is how the making of a lot's worktrees went. Starts are the
// commits the lot's branches started from, by repository name (for a
// branch that existed, its merge base with the base); Made names the
// repositories whose worktree was not there before (they are set up
// afresh). Err, when set, says which worktree could not be made and why:
// the lot cannot run now.
type Prepared struct {
	Starts map[string]string
	Made   []string
	Err    string
}

// RepoBase, as a LookRequest's From, counts from the commit the
// repository's base branch is at.
const RepoBase = "@base"

// LookRequest asks what the lot's worktrees hold. From gives, by
// repository name, the commit the lot's commits there are counted from
// (RepoBase: the base branch's commit; absent or "": none counted).
// Commits asks for the commits from..HEAD, Changed for the files they add
// or change, Dirty for the uncommitted files.
type LookRequest struct {
	Lot
	From                    map[string]string
	Commits, Changed, Dirty bool
	// Tree asks for the tree id of each worktree's HEAD commit.
	Tree bool
}

// Looked is one worktree as Look read it: its HEAD, the commits since
// From ("sha subject", oldest first), the files they change (paths from
// the repository's root), its uncommitted files. Err says what could not
// be read (the rest is what could). Tree is the tree id of HEAD's commit
// (LookRequest.Tree).
type Looked struct {
	Repo    string
	Head    string
	Tree    string
	Commits []string
	Changed []string
	Dirty   []string
	Err     string
}

// Lot names a lot and its worktrees: what every request about the lot's
// worktrees carries.
type Lot struct {
	// Wave is the wave's name (spec.Wave.Name); WaveID its id on the
	// orchestrator's machine (the state's lineage, "" before the first
	// step), which marks every process of the step.
	Wave, WaveID string
	// ID is the lot's id.
	ID string
	// Branch is the lot's branch in each of its repositories, without
	// refs/heads/ ("" for a lot without a repository).
	Branch string
	// Repos are the lot's repositories, its own first, then its
	// neighbours (also) in the wave file's order; none for a lot without
	// a repository.
	Repos []Repo
}

// Repo is one repository of a lot, by its name in the wave file, and the
// lot's worktree of it.
type Repo struct {
	// Name is the repository's name (spec.Repo.Name): the runner finds
	// its path, base branch and guard by it.
	Name string
	// Worktree is the folder of the lot's worktree of the repository.
	Worktree string
	// Start is the commit the lot's branch there started from ("" when
	// not known): a neighbour's commits are counted from it.
	Start string
}

// Request is one step to run. The orchestrator fills it; each field says
// what it is for.
type Request struct {
	Lot
	// Kind and Pass are the step's (state.Step.Kind, .Pass); state.Info
	// says what runs it (an agent session or a command).
	Kind state.StepKind
	Pass int
	// Dir is where the step runs: the lot's own worktree, the worktree of
	// the neighbour named Repo (a test gate there), or, for a lot without
	// a repository, the wave's folder.
	Dir string
	// Repo names the neighbour repository whose worktree Dir is, "" for
	// the lot's own (state.Step.Repo).
	Repo string
	// Command is the shell command of a command step (run, test), run as
	// /bin/sh -c Command.
	Command string
	// Env are the environment entries the lot adds to the step's
	// processes (its env, toolchain and the wave's guard environment),
	// after the runner's inherited environment and the step's marks.
	Env []string
	// Timeout bounds the step (0: none).
	Timeout time.Duration
	// Log is where the step's output goes: for a command, the log file
	// (made, with its folder, on the first write); for a session, the
	// prefix of its files (Log+".json", ".err": agent.Session.LogPrefix).
	Log string
	// LogLimit bounds each log file, in bytes (the lot's log_limit; 0:
	// spec.DefaultLogLimit).
	LogLimit spec.Bytes
	// Limits bound the step's whole process tree (the lot's limits).
	Limits spec.Limits
	// OutsideSandbox says the step runs outside an OS sandbox (a session
	// whose sandbox this machine lacks or turns off), or may (a command):
	// the lead's checkouts are compared around it. A command step the
	// runner ran in its own step sandbox is not compared (NoSandbox).
	OutsideSandbox bool
	// NoSandbox says the wave file turns the OS sandbox of command steps
	// off for this step (sandbox = false on the lot or on one of its
	// repositories, spec.Lot.NoSandbox): its command, test gate or setup
	// runs directly, the lead's checkouts compared around it.
	NoSandbox bool
	// Writable are the folders (absolute) the step may also write in the
	// step sandbox (the lot's sandbox_writable, spec.Lot.StepWritable);
	// cadence's own files and folders in them stay read-only.
	Writable []string

	// The fields below are a session's (Kind runs an agent).

	// Agent names the lot's agent (spec.Agent.Name, an agent of the wave
	// file the runner was given, the built-in one included): its kind
	// picks the adapter, its settings are the adapter's.
	Agent string
	// Model and FallbackModel are the session's models (the table's
	// model class picks which of the lot's).
	Model, FallbackModel string
	// Brief is the rendered prompt (the orchestrator renders it).
	Brief string
	// SessionID is the session's UUID, made by the orchestrator.
	SessionID string
	// ReportSchema names the JSON Schema of the session's report
	// (state.Info(Kind).ReportSchema, a file of package schemas).
	ReportSchema string
	// ReadOnly says the step must leave the lot's worktrees as it found
	// them (state.Info(Kind).ReadOnly): the Result says what changed.
	ReadOnly bool
	// Bootstrap is a setup's (KindSetup): the submodules and copy files
	// the worktree gets before Command, the setup command, runs.
	Bootstrap spec.Bootstrap
	// Pristine says the lot's worktrees are as this run made them (clean,
	// at their start): a write session's first look at them reads no
	// git status.
	Pristine bool
	// Integrating says the step is part of an integration: the merge
	// queue's test gate on a rebased tree (executor/mergequeue). It runs
	// where the repositories are: a remote runner runs it with the local
	// one, whatever the executor block sends away.
	Integrating bool
	// Reattach is the run key (state.RemoteStep.RunKey) of this step,
	// the same kind and pass, that an earlier apply left running on a
	// worker when cadence stopped: a remote runner awaits that run (or
	// takes its result) instead of starting another; "" when there is
	// none. step.Local ignores it.
	Reattach string
	// UX is a UX review's application (a kind whose state.Info says
	// Browser); nil for other steps.
	UX *UXApp
}

// UXApp is the running application a UX review looks at (spec.UX, with
// the folder for its screenshots), data only.
type UXApp struct {
	// Command starts the application in Dir, in the step sandbox, with
	// the step's environment ("" when it already runs at URL).
	Command string
	// URL must answer (a status below 500) within Timeout before the
	// session starts.
	URL     string
	Timeout time.Duration
	// Paths are the pages the brief names to visit first.
	Paths []string
	// ShotsDir is the folder, the orchestrator's, under the lot's log
	// folder, where the screenshots the runner keeps are (made by the
	// runner; what an earlier attempt left in it is replaced).
	ShotsDir string
}

// UXResult is what a UX review's Result says of the application and its
// browser.
type UXResult struct {
	// NotVerified says why the session could not look at the application
	// ("the app did not start: …", "the browser was not connected: …",
	// "no screenshot came back"); "" when it did.
	NotVerified string
	// Screenshots are the files kept in UXApp.ShotsDir (absolute, .png,
	// at most state.MaxScreenshots of at most state.MaxScreenshotBytes).
	Screenshots []string
}

// Result is how a step ended. The orchestrator records the step's end
// from it, and the lot's warnings and the wave's incidents.
type Result struct {
	// Status and Cause are the step's (state.Step.Status, .Cause): the
	// cause includes the incident, the limit reached and the output cut
	// when there were any.
	Status state.StepStatus
	Cause  string
	// Output is the last lines the command wrote (at most 20), for the
	// lot's outcome when the step failed; "" for sessions.
	Output string
	// Usage and CostMicros (millionths of a dollar) are the session's;
	// CostEstimated says the cost was computed at list prices.
	Usage         state.Usage
	CostMicros    int64
	CostEstimated bool
	// RawUsage is the session's usage as its adapter reported it
	// (agent.Outcome.RawUsage); nil when it reported none.
	RawUsage map[string]int64
	// API is the class of the API failure the session ended on
	// (agent.APINone for any other ending); such a session is
	// interrupted, for the orchestrator to retry or suspend.
	API agent.APIFailure
	// ResetAt is when a usage limit resets (status quota), if known.
	ResetAt *time.Time
	// Report is the session's structured report (nil when none), and
	// ReportPath the file it came from (Log+".json").
	Report     *agent.Report
	ReportPath string
	// HeadBefore and HeadAfter are the commit checked out in Dir when the
	// step began and ended; a test gate's HeadAfter is the commit it
	// passed.
	HeadBefore, HeadAfter string
	// Commits are the commits the step added in the lot's own worktree
	// ("sha subject", oldest first); AlsoCommits the neighbours', by
	// repository name. A read-only step has none.
	Commits     []string
	AlsoCommits map[string][]string
	// Changed says what a read-only step changed in the lot's worktrees
	// ("HEAD moved", "uncommitted files a, b"); empty when nothing.
	Changed []string
	// Denied are the tool calls the session was refused, each once.
	Denied []string
	// Warnings are the lot's new warnings: commits that do not cite the
	// lot, push commands the session ran, calls it was denied.
	Warnings []string
	// Incident is the step's own incident ("incident: during its …
	// step, not by cadence: …", "" when none): a guarded ref, a worktree's
	// HEAD or a config file moved during the step (and was put back). The
	// step failed on it, and Cause begins with it.
	Incident string
	// Incidents are the wave's incidents the step's guard found, each as
	// the journal says it ("lot a: during its implement step, …"): the
	// wave stops. The step's own incident is in Cause too.
	Incidents []string
	// Held, when set, is the cause the lot is held for at its next step
	// boundary (a lead's checkout changed during the step).
	Held string
	// Backups are the backup refs the runner made for the lot (a test
	// gate that moved HEAD was put back).
	Backups []string
	// OutputCut is how many bytes of output the log limit dropped.
	OutputCut int64
	// LimitHit names the lot's limit the step's process tree reached
	// (proc.Limit's names: "memory", "processes", …; "" none): its
	// processes were ended, and Cause says so.
	LimitHit string
	// WriteFailed says the step's files could not be written: the
	// machine's error, which stops the wave; Cause says it.
	WriteFailed bool
	// Unstarted says the step's process could not be started or waited
	// for (the machine's error, never the lot's), or, before EventBegin,
	// that its wait was cut short: Cause says why.
	Unstarted bool
	// Logged says the step wrote its log file (Log): a silent command
	// leaves none.
	Logged bool
	// UX is a UX review's (Request.UX); nil for other steps.
	UX *UXResult
}

// Events receives what happens during a step. Emit returns once the
// receiver has taken e in (for EventBegin: recorded the step's begin);
// its error says it could not, which, for EventBegin, keeps the step from
// starting. A runner may emit from several goroutines: an Events is safe
// for concurrent use, and events are taken in the order Emit is called.
// A runner on another machine emits by a request that waits for its
// reply.
type Events interface {
	Emit(Event) error
}

// EventKind says what an Event reports.
type EventKind string

// The events of a step.
const (
	// EventBegin: the runner holds what the step needs (a session's
	// machine slot) and starts it now: the journal records the step's
	// begin. A step that ends before it (its wait cut short) was never
	// begun, and its Result is Unstarted.
	EventBegin EventKind = "begin"
	// EventStarted: the step's process runs (PID; a session's SessionID
	// and the HeadBefore it started at): the journal records them, for a
	// later apply to find what is left of it.
	EventStarted EventKind = "started"
	// EventProgress: a session's usage so far (Usage).
	EventProgress EventKind = "progress"
	// EventNote: a remark for the journal (Text).
	EventNote EventKind = "note"
	// EventOutput: the last lines a command wrote (Text).
	EventOutput EventKind = "output"
	// EventIncident: an incident of the wave the guard found before the
	// step ran (Text): the wave stops.
	EventIncident EventKind = "incident"
)

// Event is one thing that happened during a step.
type Event struct {
	Kind       EventKind
	PID        int
	SessionID  string
	HeadBefore string
	Usage      state.Usage
	Text       string
	// Worker, RunKey and Delivery are set by a runner whose step runs on
	// a remote worker (docs/remote.md), on EventStarted and
	// EventProgress: the worker's id, the step's run key in the engine's
	// queue and the delivery that runs it (1: the first). PID is then 0:
	// no process of the step runs on this machine.
	Worker   string
	RunKey   string
	Delivery uint64
}
