// Package state reads and writes a wave's state file: the versioned JSON
// record, kept next to the wave file, of every lot's progress, sessions,
// tokens and outcome, from which the next apply resumes.
//
// The file is <wave-file-stem>.state.json; its schema is
// schemas/state.schema.json. Writes replace the file atomically (temp file in
// the same folder, fsync, rename).
//
// The package also holds the lot life cycle (docs/architecture.md) as pure
// functions (lifecycle.go, resume.go): Start, Next and Resume are the one
// place that says which step comes next, where a resumed lot goes on, and
// when a lot is done, handed back or held; the planner previews with them
// and the executor runs from them. Finding severities are typed (Severity).
package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/safefile"
)

// FormatVersion is the state file format this build writes and reads.
const FormatVersion = 1

// WaveStatus is the status of a whole wave.
type WaveStatus string

// Wave statuses.
const (
	WaveRunning WaveStatus = "running"
	// WaveDone: every lot of the wave file is done.
	WaveDone WaveStatus = "done"
	// WaveNeedsLead: the run ended with lots that are not done and that no
	// plain apply finishes by itself: handed back, failed, waiting for an
	// answer, blocked, or waiting on something outside the lot (a dirty
	// checkout of the base, a full disk).
	WaveNeedsLead       WaveStatus = "needs-lead"
	WaveSuspendedBudget WaveStatus = "suspended-budget"
	WaveSuspendedQuota  WaveStatus = "suspended-quota"
	// WaveSuspendedAPI: the agent's API failed every session alike (its
	// credentials or credit refused, unreachable) or stayed overloaded
	// through cadence's retries; the next apply resumes, once it is fixed.
	WaveSuspendedAPI WaveStatus = "suspended-api"
	// WaveInterrupted: cadence was stopped (signal, stop, incident); the
	// next apply resumes.
	WaveInterrupted WaveStatus = "interrupted"
	// WavePartial: every lot the run selected is done, but -target left
	// lots of the wave file unselected.
	WavePartial WaveStatus = "partial"
)

// LotStatus is the status of one lot.
type LotStatus string

// Lot statuses.
const (
	LotQueued     LotStatus = "queued"
	LotRunning    LotStatus = "running"
	LotQuestion   LotStatus = "question"
	LotDone       LotStatus = "done"
	LotHandedBack LotStatus = "handed-back"
	LotFailed     LotStatus = "failed"
	LotBlocked    LotStatus = "blocked"
	LotSuspended  LotStatus = "suspended"
	// LotInterrupted: a step did not end by itself (a signal, cadence's own
	// cancel, a machine error such as ENOSPC) or its integration was refused
	// for a reason outside the lot; Lot.Cause says which. The next apply
	// resumes it (state.Resume); it never counts as failed.
	LotInterrupted LotStatus = "interrupted"
)

// StepKind names a step of a lot's life cycle.
type StepKind string

// Step kinds.
const (
	StepPrecheck  StepKind = "precheck"
	StepImplement StepKind = "implement"
	StepTest      StepKind = "test"
	StepReview    StepKind = "review"
	// StepUX is the UX review of a visible lot (docs/ux.md): a read-only
	// session that looks at the running application in a browser.
	StepUX        StepKind = "ux"
	StepFix       StepKind = "fix"
	StepFixMinors StepKind = "fix-minors"
	StepRecheck   StepKind = "review-recheck"
	StepIntegrate StepKind = "integrate"
	StepRun       StepKind = "run"
)

// StepStatus is the result of one step.
type StepStatus string

// Step statuses.
const (
	StepRunning     StepStatus = "running"
	StepOK          StepStatus = "ok"
	StepFailed      StepStatus = "failed"
	StepTimedOut    StepStatus = "timed-out"
	StepQuota       StepStatus = "quota"
	StepCut         StepStatus = "cut"
	StepInterrupted StepStatus = "interrupted"
)

// Usage counts the tokens of one or more sessions.
type Usage struct {
	Input      int64 `json:"input"`
	CacheWrite int64 `json:"cache_write"`
	CacheRead  int64 `json:"cache_read"`
	Output     int64 `json:"output"`
}

// Counted is what budgets count: input + cache writes + output.
func (u Usage) Counted() int64 { return u.Input + u.CacheWrite + u.Output }

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.Input + o.Input, u.CacheWrite + o.CacheWrite, u.CacheRead + o.CacheRead, u.Output + o.Output}
}

// Step is one step of a lot: an agent session, a test gate run, a command.
type Step struct {
	Kind       StepKind   `json:"kind"`
	Pass       int        `json:"pass,omitempty"`
	Model      string     `json:"model,omitempty"`
	SessionID  string     `json:"session_id,omitempty"`
	PID        int        `json:"pid,omitempty"`
	Started    time.Time  `json:"started"`
	Ended      *time.Time `json:"ended,omitempty"`
	Status     StepStatus `json:"status"`
	Usage      Usage      `json:"usage"`
	CostMicros int64      `json:"cost_micro_usd"`
	HeadBefore string     `json:"head_before,omitempty"`
	HeadAfter  string     `json:"head_after,omitempty"`
	Commits    []string   `json:"commits,omitempty"`
	Report     string     `json:"report,omitempty"`
	Cause      string     `json:"cause,omitempty"`
	// Conform is the verdict of a review step (nil for other steps).
	Conform *bool `json:"conform,omitempty"`
	// AlsoCommits are the commits a write step added in the lot's
	// neighbour repositories (also), per repository name, each "sha
	// subject", oldest first; Commits holds the own repository's.
	AlsoCommits map[string][]string `json:"also_commits,omitempty"`
	// Repo names the neighbour repository a test step ran in (its
	// worktree, its test command); empty for the lot's own repository.
	Repo string `json:"repo,omitempty"`
	// Denied are the session's tool calls the agent CLI refused, as "Tool"
	// or "Tool (command or path)": a review's Edit, a denied git command.
	Denied []string `json:"denied,omitempty"`
	// CostEstimated says CostMicros was computed from Usage at list prices:
	// the session was stopped before the CLI reported its cost.
	CostEstimated bool `json:"cost_estimated,omitempty"`
	// OutputCut is the number of bytes of the step's captured output (a
	// command's or a test gate's log) dropped by the lot's log_limit: the files keep the head and the tail around one line
	// that says so (internal/boundedlog). 0: nothing was cut.
	OutputCut int64 `json:"output_cut,omitempty"`
	// Agent names the wave's agent block a session step ran with (the
	// lot's agent for a write step, its review_agent for a read-only one,
	// as the step-kind table's AgentClass says), recorded at its begin;
	// "" for a step without a session or in a state written before agents
	// were recorded per step.
	Agent string `json:"agent,omitempty"`
	// Vendor is the kind of that agent (spec.Agent.Kind: "claude", the
	// adapter that ran the session), recorded with Agent; "" where Agent
	// is (StepVendor reads it).
	Vendor string `json:"vendor,omitempty"`
	// RawUsage is the session's usage as its adapter reported it, in the
	// CLI's own field names and meaning (Claude Code's input_tokens
	// exclude cache reads; another vendor's may include them), counts of
	// tokens; nil when the adapter reported none. Usage is the same
	// spending in cadence's terms, the one budgets count.
	RawUsage map[string]int64 `json:"raw_usage,omitempty"`
	// NotVerified is why a UX review (StepUX) could not look at the
	// running application ("the app did not start: …", "the browser
	// was not connected", "no screenshot"): the step ended ok, its verdict
	// unused, and the lot went on to the code review (docs/ux.md). ""
	// for a verified review and for other kinds.
	NotVerified string `json:"not_verified,omitempty"`
	// Screenshots are the UX review's screenshots that cadence kept
	// (absolute paths of PNG files under the lot's log folder, at most
	// MaxScreenshots); none for other kinds.
	Screenshots []string `json:"screenshots,omitempty"`
	// Remote is where the step runs or ran on a remote worker; nil for a
	// step of this machine (docs/remote.md).
	Remote *RemoteStep `json:"remote,omitempty"`
}

// RemoteStep is what the lead knows of a step that runs on a remote
// worker: the worker's id, the step's run key in the engine's queue and
// the delivery that runs it (1: the first; a later one after a worker was
// lost), the counted tokens the worker reported so far (until the step
// ends and Step.Usage holds its figure; the last figure of a lost
// session, an estimate), and when the lead last heard from it.
type RemoteStep struct {
	Worker   string    `json:"worker"`
	RunKey   string    `json:"run_key"`
	Delivery uint64    `json:"delivery,omitempty"`
	Tokens   int64     `json:"tokens,omitempty"`
	Heard    time.Time `json:"heard"`
}

// MaxScreenshots and MaxScreenshotBytes bound what a UX review keeps of
// its browser's screenshots (the step runner drops the rest): at most
// MaxScreenshots files, each at most MaxScreenshotBytes, so that a lot's
// log folder stays small however many pages the session looked at.
const (
	MaxScreenshots     = 12
	MaxScreenshotBytes = 4 << 20
)

// UnrecordedVendor is the vendor of a session step whose state records
// none: a state written before vendors were recorded ran only Claude Code
// sessions.
const UnrecordedVendor = "claude"

// StepVendor is the vendor of step s (its recorded Vendor, else
// UnrecordedVendor), "" for a step without a session.
func StepVendor(s Step) string {
	switch {
	case !s.Kind.Session():
		return ""
	case s.Vendor != "":
		return s.Vendor
	}
	return UnrecordedVendor
}

// CommitCount is the number of commits the step added, in every
// repository of the lot (own and neighbours).
func (s Step) CommitCount() int {
	n := len(s.Commits)
	for _, cs := range s.AlsoCommits {
		n += len(cs)
	}
	return n
}

// Finding is one review finding.
type Finding struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Text     string   `json:"text"`
}

// Setup is the record of one setup of a lot's worktrees, written by the
// executor (executor/bootstrap.go).
type Setup struct {
	// Status is StepRunning while it runs, then StepOK, StepFailed,
	// StepTimedOut or StepInterrupted.
	Status  StepStatus `json:"status"`
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	// Cause says why it did not end ok.
	Cause string `json:"cause,omitempty"`
	// Logs are the setup commands' log files (absolute), one per worktree
	// whose repository has a setup command that wrote output.
	Logs []string `json:"logs,omitempty"`
}

// Question is a question a write step asked, with the lead's answer once given.
type Question struct {
	Step   int    `json:"step"`
	Text   string `json:"text"`
	Answer string `json:"answer,omitempty"`
}

// Lot is the recorded progress of one lot.
type Lot struct {
	Status   LotStatus `json:"status"`
	Branch   string    `json:"branch,omitempty"`
	Worktree string    `json:"worktree,omitempty"`
	BaseSHA  string    `json:"base_sha,omitempty"`
	Steps    []Step    `json:"steps,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
	// UXFindings are the findings of the lot's last UX review (a visible
	// lot's, docs/ux.md), for the next UX review's brief; its blocking and
	// major ones were the lot's Findings for the fix pass, its minor ones
	// join the code review's for the minor pass.
	UXFindings []Finding  `json:"ux_findings,omitempty"`
	Questions  []Question `json:"questions,omitempty"`
	Warnings   []string   `json:"warnings,omitempty"`
	// AgentConfig are the files the lot's commits add or change that an
	// agent CLI loads as its configuration and can run as commands
	// (agent.Registry.ConfigFiles: .mcp.json, .claude/settings.json, …), as
	// paths in the repository ("web: .mcp.json" for a neighbour
	// repository's), sorted; set by the executor after each step that
	// made commits.
	AgentConfig   []string `json:"agent_config,omitempty"`
	IntegratedSHA string   `json:"integrated_sha,omitempty"`
	PatchID       string   `json:"patch_id,omitempty"`
	BlockedBy     string   `json:"blocked_by,omitempty"`
	// Dropped is set when the lead dropped the lot (cadence drop): what it
	// was doing. It is recorded before the drop is acknowledged, while a
	// step of the lot may still run; the lot is handed back when that step
	// ends, or by the next apply when cadence stopped first (Resume holds
	// a lot that is not done and has it).
	Dropped string `json:"dropped,omitempty"`
	Cause   string `json:"cause,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	// Backups are the refs (refs/cadence/backup/<wave>/<lot>/<n>) that keep
	// the commits of the lot's earlier attempts: a command lot replayed
	// from the commit it started from, or a lot replaced (-replace). They
	// are never deleted by cadence.
	Backups []string `json:"backups,omitempty"`
	// Setup is the last setup of the lot's worktrees (spec.Bootstrap:
	// submodules, copies, the setup command); nil until one starts. Its
	// status ok means every worktree that existed then is set up: the next
	// apply sets up again only a worktree it has to make again.
	Setup *Setup `json:"setup,omitempty"`
	// Integrating is the integration in progress of a lot with neighbour
	// repositories: recorded before the first base moves, cleared once
	// the integration is recorded. Found by the next apply, it is
	// completed (executor/intent.go).
	Integrating *Integration `json:"integrating,omitempty"`
	// Stacked is set while the lot's branch sits on lots ahead of it in
	// an integration batch that are not on the base yet (queue.go).
	Stacked *Stack `json:"stacked,omitempty"`
}

// Integration is the intent of an integration across several
// repositories: each base goes from Old to New (full commit ids).
type Integration struct {
	Repos []BaseMove `json:"repos"`
}

// BaseMove is one repository's base move of an Integration: the branch
// Base of repository Repo (its name in the wave file) from Old to New.
type BaseMove struct {
	Repo string `json:"repo"`
	Base string `json:"base"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// Usage sums the usage of the lot's steps.
func (l *Lot) Usage() Usage {
	var u Usage
	for _, s := range l.Steps {
		u = u.Add(s.Usage)
	}
	return u
}

// Pending returns the first unanswered question, or nil.
func (l *Lot) Pending() *Question {
	for i := range l.Questions {
		if l.Questions[i].Answer == "" {
			return &l.Questions[i]
		}
	}
	return nil
}

// Consumed is what a wave has spent.
type Consumed struct {
	Counted    int64 `json:"counted"`
	CacheRead  int64 `json:"cache_read"`
	CostMicros int64 `json:"cost_micro_usd"`

	// CostEstimated says part of CostMicros was computed at list prices
	// (Step.CostEstimated).
	CostEstimated bool `json:"cost_estimated,omitempty"`
}

// State is the whole state file.
type State struct {
	FormatVersion int             `json:"format_version"`
	Lineage       string          `json:"lineage"`
	Serial        int64           `json:"serial"`
	Wave          string          `json:"wave"`
	WaveDigest    string          `json:"wave_digest"`
	Status        WaveStatus      `json:"status"`
	Budget        int64           `json:"budget,omitempty"`
	BudgetMicros  int64           `json:"budget_micro_usd,omitempty"`
	Consumed      Consumed        `json:"consumed"`
	ResetAt       *time.Time      `json:"reset_at,omitempty"`
	Updated       time.Time       `json:"updated"`
	Lots          map[string]*Lot `json:"lots"`

	// Stopped is the machine error that stopped the last apply (a full
	// disk: the path, the error and the free space then; too little free
	// space to start a lot), "" when it ended otherwise. The executor
	// writes it when an apply ends.
	Stopped string `json:"stopped,omitempty"`
	// Incident is the incident that stopped the last apply (a push, a
	// moved ref, a change of the lead's checkout: what it names and what
	// was done), "" when there was none. The executor writes it when an
	// apply ends.
	Incident string `json:"incident,omitempty"`

	// CadenceVersion is the cadence the wave's first apply ran (or the
	// last apply -upgrade): what `cadence version` says of its build, as
	// the CLI gives it (executor.ApplyOptions.CadenceVersion); "" in a
	// state written before it was recorded. A later apply by another
	// cadence is refused unless -upgrade (planner: WarnCadenceChanged).
	// AgentVersion is the agent CLI's answer to its version probe
	// ("2.1.3 (Claude Code)") at that apply; "" when no agent was probed.
	// A different one is only a warning (WarnAgentChanged). Both are
	// optional within FormatVersion 1: files without them still read.
	CadenceVersion string `json:"cadence_version,omitempty"`
	AgentVersion   string `json:"agent_version,omitempty"`
	// Gates are the test gate runs of the wave, keyed by GateKey, so that
	// no tree is tested twice with the same command and environment
	// (queue.go). Optional within FormatVersion 1.
	Gates map[string]Gate `json:"gates,omitempty"`
	// Remotes is what each repository's remotes showed without network
	// when the last apply started, by repository name (the guard's
	// LocalRemoteState, or "sha256:<hex>" of it when longer than
	// MaxRemoteRecord): an apply after one that was killed compares them
	// (docs/integration.md, Guards). Optional within FormatVersion 1.
	Remotes map[string]string `json:"remotes,omitempty"`
	// JournalHead is the digest chain's head when the state file was
	// written (the digest of the last journal record it holds, chain.go):
	// the first journal record after it must chain from it. Optional
	// within FormatVersion 1: a state without it reads a journal without
	// digests.
	JournalHead string `json:"journal_head,omitempty"`
}

// MaxRemoteRecord is the longest remote state State.Remotes keeps as
// text (64 KiB); a longer one is kept as its digest.
const MaxRemoteRecord = 64 << 10

// PathFor returns the state file path of a wave file: the same folder, the
// file's stem (without .hcl or .hcl.json) plus ".state.json". The rule is
// layout.StateFile's; this is kept for the callers of the state package.
func PathFor(waveFile string) string { return layout.StateFile(waveFile) }

// ErrNotExist is returned by Read when there is no state file yet.
var ErrNotExist = errors.New("no state file")

// MaxStateBytes is the largest state file, and journal, Read reads:
// 256 MiB, far beyond a wave of thousands of lots.
const MaxStateBytes = 256 << 20

// Read reads a state file, replaying the journal a running (or killed)
// apply keeps beside it, and returns the state and the SHA-256 digest of the
// bytes read. A missing file (and journal) gives ErrNotExist. What is read
// is checked: the JSON is decoded strictly (no unknown field, no trailing
// data), must be of this FormatVersion, and must pass Validate; any
// problem is an error naming the file. No input makes it panic
// (FuzzRead). Updated is, after a crash, the time of the last journal
// record (or the journal's modification time).
func Read(path string) (*State, string, error) {
	// Bounded reads (internal/safefile): a state file is a regular file,
	// so a symbolic link committed in its place cannot point Read at
	// /dev/zero or a named pipe.
	b, err := safefile.Read(path, MaxStateBytes)
	journal, jerr := safefile.Read(path+JournalSuffix, MaxStateBytes)
	if errors.Is(err, os.ErrNotExist) && errors.Is(jerr, os.ErrNotExist) {
		return nil, "", ErrNotExist
	}
	var s *State
	switch {
	case errors.Is(err, os.ErrNotExist):
		s = &State{FormatVersion: FormatVersion}
	case err != nil:
		return nil, "", fmt.Errorf("read state: %w", err)
	default:
		if s, err = Decode(b); err != nil {
			return nil, "", fmt.Errorf("state file %s: %w", path, err)
		}
	}
	if s.Lots == nil {
		s.Lots = map[string]*Lot{}
	}
	if jerr == nil && len(journal) > 0 {
		if err := replayJournal(s, bytes.NewReader(journal)); err != nil {
			if errors.Is(err, ErrJournalForged) {
				return nil, "", fmt.Errorf("%s%s: %w; cadence replays nothing of it. Look at it; to resume from the state file alone (losing what the journal recorded), move it away (mv %s%s %s%s.refused) and apply again",
					path, JournalSuffix, err, path, JournalSuffix, path, JournalSuffix)
			}
			return nil, "", fmt.Errorf("%s%s: %w", path, JournalSuffix, err)
		}
		if s.Updated.IsZero() {
			if fi, err := os.Stat(path + JournalSuffix); err == nil {
				s.Updated = fi.ModTime().UTC()
			}
		}
		if err := Validate(s); err != nil {
			return nil, "", fmt.Errorf("state file %s with its journal: %w", path, err)
		}
		b = append(b, journal...)
	}
	return s, Digest(b), nil
}

// Decode decodes the bytes of a state file strictly and validates them:
// not JSON, another format version, an unknown field, trailing data or a
// value Validate refuses is an error (without the file's name: Read adds
// it).
func Decode(b []byte) (*State, error) {
	var head struct {
		FormatVersion  int             `json:"format_version"`
		Lots           json.RawMessage `json:"lots"`
		CadenceVersion any             `json:"cadence_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if head.FormatVersion != FormatVersion {
		return nil, formatError(head.FormatVersion, head.CadenceVersion)
	}
	// The schema requires "lots", an object: a state without it would
	// read as "no lot has run", and apply would run done lots again.
	if l := bytes.TrimSpace(head.Lots); len(l) == 0 || l[0] != '{' {
		return nil, errors.New(`"lots" must be an object (the schema requires it; {} when no lot has run)`)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	if err := Validate(&s); err != nil {
		return nil, err
	}
	if s.Lots == nil {
		s.Lots = map[string]*Lot{}
	}
	return &s, nil
}

// formatError is the refusal of a state file of another format version:
// it names the cadence that wrote the file when the file records it
// (cadence_version, a string), and says which format this cadence reads.
func formatError(version int, writer any) error {
	msg := fmt.Sprintf("format_version %d; this cadence reads format_version %d only", version, FormatVersion)
	if w, ok := writer.(string); ok && w != "" {
		msg += fmt.Sprintf(": the file was written by cadence %.200q, which reads it", w)
	} else if version > FormatVersion {
		msg += ": the file was written by a newer cadence, which reads it"
	}
	return errors.New(msg)
}

// Digest is the hex SHA-256 of b, prefixed "sha256:".
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Write replaces the state file atomically: a temp file in the same folder,
// fsync, rename, then fsync of the folder.
func Write(path string, s *State) error {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic replaces path with data so that a reader sees either the old
// or the new content, never a mix, even after a crash.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
