package agent

import (
	"os"
	"strconv"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Session is one agent session: a fresh agent process in a lot's worktree.
// The executor fills it; an adapter turns it into its CLI's command line.
type Session struct {
	Wave, Lot string
	// WaveID identifies the run's wave on this machine (its state's
	// lineage): with Lot, the mark of every process of the session
	// (MarkEnv), by which a later apply finds what an earlier one left.
	WaveID string
	Step   state.StepKind
	Pass   int
	// Agent is the lot's agent; its Kind picks the adapter.
	Agent *spec.Agent
	Model string
	// FallbackModel is the model the agent CLI switches to when Model is
	// overloaded ("" for none; spec.Lot.FallbackModel).
	FallbackModel string
	// Dir is the lot's worktree; AddDirs the worktrees of its neighbours.
	Dir     string
	AddDirs []string
	// Brief is the rendered prompt; ReadOnly marks precheck and review.
	Brief    string
	ReadOnly bool
	// ReportSchema is the file name, in package schemas, of the JSON
	// Schema the session's structured report must fit
	// ("implement.schema.json"): the step kind's, from the step-kind table
	// (state.Info(Step).ReportSchema).
	ReportSchema string
	// SessionID is the session's UUID: the agent's own session id where
	// the CLI takes one, and the mark of its processes (SessionMark).
	SessionID string
	Timeout   time.Duration
	// LogPrefix is where the session's files go: LogPrefix+".json" (what
	// the agent printed on stdout), ".err" (its stderr).
	LogPrefix string
	// LogLimit bounds each of the session's files, in bytes (the lot's
	// log_limit; 0: spec.DefaultLogLimit): an adapter keeps its head and
	// its tail around one line saying what was dropped (internal/
	// boundedlog), and reads what it needs of the output as it comes,
	// never from the files.
	LogLimit int64
	// Started is called with the agent's pid once it runs.
	Started func(pid int)
	// Progress is called with the usage so far, as the session reports it.
	Progress func(state.Usage)
	// Moved reports whether the worktree changed (new commits or files)
	// since it was last asked: a write step that still moves at its timeout
	// gets more time.
	Moved func() bool
	// Note receives remarks worth showing (a timeout extended, an API retry).
	Note func(string)
	// Env are extra environment entries for the session: the push guards
	// and the lot's env and PATH (executor childEnv), after the Host's.
	Env []string
	// DenyHosts are the network hosts of the remotes of the repositories
	// the session works in (gitint.RemoteHosts: names or IPv4 addresses,
	// lower case): an adapter with a sandbox keeps its commands from
	// reaching them, so that no push leaves over the network.
	DenyHosts []string
	// DenyRead are folders the session must not read (absolute): the
	// machine's steering keys (layout.Wave.KeysDir). An adapter with a
	// sandbox denies its commands and file tools reading them.
	DenyRead []string
	// Limits bound the session's whole process tree, the agent CLI and
	// everything its tools start, as they bound a command step (the
	// lot's limits): an adapter passes them to its proc.Cmd.
	Limits proc.Limits
	// SlotLock, when set, is the session's slot file, locked: the
	// session's supervisor holds it until the session's last process is
	// gone (proc.Cmd.Hold), so the machine's session cap holds even while
	// a killed cadence's sessions are being reaped.
	SlotLock *os.File
	// Browser, when set, gives the session a browser on a running
	// application (the UX review step); an adapter that cannot says so
	// in Outcome.Browser.Cause and runs the session without one.
	Browser *Browser
}

// Outcome is how a session ended.
type Outcome struct {
	Status state.StepStatus
	// Usage is the session's usage in cadence's terms, whatever the
	// vendor: Input excludes cache reads (an adapter whose CLI counts
	// them in its input subtracts them), so that Usage.Counted means one
	// thing across vendors.
	Usage      state.Usage
	CostMicros int64
	// RawUsage is the session's usage as the CLI reported it, in its own
	// field names and meaning ("input_tokens", "cached_input_tokens",
	// ...), counts of tokens; nil when the adapter has none to give. The
	// state records it beside Usage (state.Step.RawUsage).
	RawUsage map[string]int64
	// CostEstimated says CostMicros was computed from the usage at list
	// prices (the CLI reported no cost: the session was stopped before its
	// result).
	CostEstimated bool
	// Cause explains anything but ok.
	Cause string
	// ResetAt is when a usage limit resets (Status quota), if known.
	ResetAt *time.Time
	// API is the class of the API error the session ended with (Status
	// failed), APINone for any other ending: the caller acts on it
	// (retry, pause, stop the wave), never on Cause's words.
	API APIFailure
	// Report is the structured report, nil when there was none.
	Report *Report
	// PushAttempts are commands of the session that tried to push (the
	// guards made them fail; the lead should know).
	PushAttempts []string
	// Denials are the session's tool calls the agent CLI refused (a
	// read-only session's Edit, a denied git command), in order.
	Denials []Denial
	// OutputCut is the number of bytes Session.LogLimit kept out of the
	// session's files (all its runs: a formatting retry's too).
	OutputCut int64
	// LimitHit names the limit of Session.Limits the session's tree
	// reached, or proc.LimitLeftCgroup (Status failed; the supervisor
	// ended the tree): the caller words the cause with the limit's value.
	LimitHit proc.Limit
	// WriteErr is the first error writing the session's files (a full
	// disk), an *fs.PathError naming the file: the adapter ended the
	// session with its processes at once and its status is interrupted;
	// the caller stops the wave (a machine error, never retried).
	WriteErr error
	// Browser is the evidence of the session's browser (Session.Browser
	// set), nil otherwise.
	Browser *BrowserEvidence
}

// APIFailure classes the API error a session ended with, as its adapter
// recognised it from the CLI's result. A usage or rate limit is not one of
// them: it is Status quota.
type APIFailure int

const (
	// APINone: the session did not end on an API error the caller acts on.
	APINone APIFailure = iota
	// APIOverloaded: the API answered overloaded or a server error (HTTP
	// 529, 5xx, an overloaded error inside the stream), after the CLI's
	// own retries. Usually temporary.
	APIOverloaded
	// APINetwork: the connection to the API failed on the way (dropped,
	// reset, timed out). Usually temporary.
	APINetwork
	// APIUnreachable: the API's host could not be reached at all
	// (connection refused, its name unknown): a wrong base URL, a proxy or
	// firewall, no network. Not temporary.
	APIUnreachable
	// APIAuth: the API refused the credentials (HTTP 401, 403).
	APIAuth
	// APICredit: the account cannot pay (credit balance too low, billing).
	APICredit
)

// Transient reports whether f usually goes away by itself (overloaded,
// network): worth another session after a wait.
func (f APIFailure) Transient() bool { return f == APIOverloaded || f == APINetwork }

// StopsWave reports whether f fails every session alike until the user
// acts (unreachable, credentials, credit): no session should start.
func (f APIFailure) StopsWave() bool { return f >= APIUnreachable }

var apiFailureNames = [...]string{"", "overloaded", "network", "unreachable", "auth", "credit"}

// String is the class's name: "overloaded", "network", "unreachable",
// "auth", "credit" ("" for APINone).
func (f APIFailure) String() string {
	if f >= 0 && int(f) < len(apiFailureNames) {
		return apiFailureNames[f]
	}
	return "api-failure(" + strconv.Itoa(int(f)) + ")"
}

// Denial is a tool call the agent CLI refused under the session's
// permissions, or that its OS sandbox kept from writing: the tool ("Edit",
// "Bash") and what identifies its input (the command, the file path; ""
// when unknown). Sandbox marks a write the sandbox refused (the call ran
// and failed on a read-only file system).
type Denial struct {
	Tool, Input string
	Sandbox     bool
}

// String is "Tool" or "Tool (input)", the input cut to 200 characters,
// followed by " by the sandbox" for a write the sandbox refused.
func (d Denial) String() string {
	s := d.Tool
	if d.Input != "" {
		in := []rune(d.Input)
		if len(in) > 200 {
			in = append(in[:200], '…')
		}
		s += " (" + string(in) + ")"
	}
	if d.Sandbox {
		s += " by the sandbox"
	}
	return s
}

// Spent is what a session cost: its tokens and its cost in millionths of
// a dollar, CostEstimated when that was computed at list prices rather than
// reported by the CLI.
type Spent struct {
	Usage         state.Usage
	CostMicros    int64
	CostEstimated bool
}

// Report is a session's structured report, as DecodeReport reads it: one
// field per property of the report schemas the step kinds name
// (schemas/implement, review and precheck .schema.json; a test holds each
// property to a field). Write steps fill Summary, Questions and Tests;
// reviews fill Verdict and Findings.
type Report struct {
	Status    string          `json:"status,omitempty"`
	Summary   string          `json:"summary,omitempty"`
	Questions []string        `json:"questions,omitempty"`
	Tests     string          `json:"tests,omitempty"`
	Choices   []string        `json:"choices,omitempty"`
	Verdict   string          `json:"verdict,omitempty"`
	Findings  []state.Finding `json:"findings,omitempty"`
	// AlreadyDone and Evidence are a precheck's answer.
	AlreadyDone bool   `json:"already_done,omitempty"`
	Evidence    string `json:"evidence,omitempty"`
}

// CauseNoReport is the cause of a session that succeeded without its
// structured report (after the one formatting retry, if any).
const CauseNoReport = "the session gave no structured report"

// Conform is a review's verdict: no blocking and no major finding.
func (r *Report) Conform() bool {
	return r != nil && state.Conform(r.Findings)
}

// SessionMark is the environment variable that marks every process of a
// session with its SessionID, so that what a session left running can be
// found and killed (Adapter.KillLeftovers).
const SessionMark = "CADENCE_SESSION"

// WaveMark is the environment variable that marks every process of a
// wave's steps, sessions and commands alike, with the wave's id (its
// state's lineage); with LotMark it finds what an earlier, killed apply of
// the same wave left running.
const WaveMark = "CADENCE_WAVE_ID"

// LotMark is the environment variable that names the lot of a step's
// processes.
const LotMark = "CADENCE_LOT"

// StepEnv returns the environment entries that mark every process of a
// step of lot in wave (name and id): CADENCE_WAVE, WaveMark (left out when
// the id is empty) and LotMark.
func StepEnv(wave, waveID, lot string) []string {
	env := []string{"CADENCE_WAVE=" + wave}
	if waveID != "" {
		env = append(env, WaveMark+"="+waveID)
	}
	return append(env, LotMark+"="+lot)
}

// MarkEnv returns the environment entries cadence gives every session,
// whatever its kind: StepEnv's and SessionMark.
func MarkEnv(s Session) []string {
	return append(StepEnv(s.Wave, s.WaveID, s.Lot), SessionMark+"="+s.SessionID)
}
