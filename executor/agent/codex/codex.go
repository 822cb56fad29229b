// Package codex is the adapter of OpenAI's Codex CLI (@openai/codex,
// measured at 0.171.0; agent blocks of kind "codex"): it runs a session as
// `codex exec --json --output-schema STRICT -c … -` with the brief on
// standard input, in the lot's worktree, in its own process group, with
// an explicit environment, in Codex's own sandbox (workspace-write with
// the worktrees' git dirs writable; read-only for read-only steps). It
// follows the JSONL stream for the thread, its running usage total and the
// last agent message, validates that message against the step's report
// schema (the CLI does not), asks once more for the report with `codex
// exec resume THREAD` when it is missing or invalid, classifies failures
// from the rollout file's codex_error_info, prices the usage from the
// agent's price table (the CLI reports no cost), and kills what the
// session left by its mark. Every fact about Codex's flags, JSON and files
// lives here (docs/agents.md, "Codex").
package codex

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/schemas"
)

// Kind is the agent kind this adapter serves.
const Kind = "codex"

// MinVersion is the oldest Codex CLI cadence drives: it needs `exec
// --json` with thread.started and turn.completed usage, --output-schema and
// `exec resume`.
const MinVersion = "0.171.0"

// FormatRetryPrompt asks a thread that ended without a valid report for
// the report alone (the one formatting retry, with `exec resume`).
const FormatRetryPrompt = "Your work is finished. Do not change anything. Now answer with your report alone: one JSON object that fits the output schema."

// Adapter runs sessions of the Codex CLI. It implements agent.Adapter and
// agent.SettingsDecoder; one value serves every session, and its zero
// value is ready.
type Adapter struct {
	checks sandboxChecks
}

var _ agent.Adapter = (*Adapter)(nil)

// New returns the Codex adapter, for agent.NewRegistry.
func New() *Adapter { return &Adapter{} }

// Kind implements agent.Adapter: "codex".
func (*Adapter) Kind() string { return Kind }

// Tool implements agent.Adapter: CADENCE_CODEX_BIN overrides the
// executable of agent "codex"; `codex --version` prints "codex-cli
// 0.171.0".
func (*Adapter) Tool() agent.Tool {
	return agent.Tool{
		Command:     "codex",
		EnvOverride: "CADENCE_CODEX_BIN",
		VersionArgs: []string{"--version"},
		MinVersion:  MinVersion,
		Install:     "install the Codex CLI: npm install -g @openai/codex, or set CADENCE_CODEX_BIN",
	}
}

// KillLeftovers implements agent.Adapter: every process whose environment
// carries agent.SessionMark=sessionID (Codex passes cadence's variables to
// the commands it runs), ended with proc.EndMarked.
func (*Adapter) KillLeftovers(sessionID string) int {
	if sessionID == "" {
		return 0
	}
	n, _ := proc.EndMarked([]string{agent.SessionMark + "=" + sessionID}, 0)
	return n
}

// run is one run of the CLI as once returns it: the outcome with the
// run's own usage, the thread and its total after the run.
type run struct {
	out    agent.Outcome
	thread string
	total  Usage
}

// Run implements agent.Adapter: one run, and one formatting retry
// (`exec resume`, FormatRetryPrompt) when the turn completed without a
// report that fits the step's schema. A write step is never run again. A
// session asked for a browser (s.Browser) runs without one: cadence gives
// Codex none (its evidence says so, agent.NoBrowserCause).
func (a *Adapter) Run(ctx context.Context, s agent.Session, h agent.Host) (out agent.Outcome) {
	if s.Browser != nil {
		defer func() { out.Browser = &agent.BrowserEvidence{Cause: agent.NoBrowserCause(Kind)} }()
	}
	set := settingsOf(s.Agent)
	model := modelOf(s, set)
	first := a.once(ctx, s, h, set, model, s.Brief, "", Usage{}, s.LogPrefix)
	out = first.out
	if ctx.Err() == nil && out.Status == state.StepFailed && out.Cause == agent.CauseNoReport && first.thread != "" {
		retry := a.once(ctx, s, h, set, model, FormatRetryPrompt, first.thread, first.total, s.LogPrefix+".format-retry")
		r := retry.out
		r.Usage = r.Usage.Add(out.Usage)
		r.RawUsage = addRaw(out.RawUsage, r.RawUsage)
		r.CostMicros += out.CostMicros
		r.CostEstimated = r.CostEstimated || out.CostEstimated
		r.OutputCut += out.OutputCut
		r.PushAttempts = append(out.PushAttempts, r.PushAttempts...)
		r.Denials = append(out.Denials, r.Denials...)
		out = r
	}
	return out
}

// once runs the CLI a single time: a new thread, or with thread the next
// turn of it, whose running total was prev before this run.
func (a *Adapter) once(ctx context.Context, s agent.Session, h agent.Host, set *Settings, model, prompt, thread string, prev Usage, logPrefix string) run {
	fail := func(cause string) run {
		return run{out: agent.Outcome{Status: state.StepFailed, Cause: cause}, thread: thread, total: prev}
	}
	if s.ReportSchema == "" {
		return fail("session of step " + string(s.Step) + ": no report schema")
	}
	b, err := schemas.FS.ReadFile(s.ReportSchema)
	if err == nil {
		b, err = StrictSchema(b)
	}
	if err != nil {
		return fail(err.Error())
	}
	schemaFile := logPrefix + ".schema.json"
	if err := os.WriteFile(schemaFile, b, 0o600); err != nil {
		return run{out: writeFailed(err, 0), thread: thread, total: prev}
	}
	env := append(append(append([]string{}, h.Env...), s.Env...), agent.MarkEnv(s)...)
	if sandboxedWrite(s) && s.LogPrefix != "" {
		tmp := SessionTemp(s.LogPrefix)
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return run{out: writeFailed(err, 0), thread: thread, total: prev}
		}
		defer os.RemoveAll(tmp)
		env = append(env, "TMPDIR="+tmp)
	}
	command := h.Command
	if command == "" && s.Agent != nil {
		command = s.Agent.Command
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	files, err := agent.OpenSessionFiles(logPrefix, s.LogLimit, cancel)
	if err != nil {
		return run{out: writeFailed(err, 0), thread: thread, total: prev}
	}
	timeout := agent.WatchTimeout(sctx, cancel, s)
	w := newWatch(func(total Usage) {
		if s.Progress != nil {
			s.Progress(total.Sub(prev).State())
		}
	})
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.consume(pr, files.Stdout())
		io.Copy(io.Discard, pr)
	}()
	var hold []*os.File
	if s.SlotLock != nil {
		hold = append(hold, s.SlotLock)
	}
	res, rerr := proc.Run(sctx, proc.Cmd{Path: command, Args: Args(s, set, model, schemaFile, thread), Dir: s.Dir, Env: env,
		Stdin: strings.NewReader(prompt), Stdout: pw, Stderr: files.Stderr(), Grace: h.Grace, Supervisor: h.Supervisor,
		Started: s.Started, Hold: hold, Limits: s.Limits})
	pw.Close()
	wg.Wait()
	a.KillLeftovers(s.SessionID)
	st := w.result()
	if st.ThreadID == "" {
		st.ThreadID = thread
	}
	ro, _ := ReadRollout(RolloutPath(Home(env), st.ThreadID))
	total := prev
	switch {
	case st.Turns > 0:
		total = st.Total
	case ro.HasTotal:
		total = ro.Total // stopped mid-turn: the rollout has every response's count
	}
	werr, cut := files.Close(), files.Cut()
	var out agent.Outcome
	switch {
	case werr != nil:
		out = writeFailed(werr, cut)
	case rerr != nil:
		out = agent.Outcome{Status: state.StepFailed, Cause: rerr.Error()}
	default:
		fired, extended := timeout()
		out = Classify(Ended{Proc: res, Stream: st, Rollout: ro, Stderr: string(agent.ErrTail(logPrefix, s.LogLimit)),
			ReportSchema: s.ReportSchema, Step: s.Step, Cancelled: ctx.Err() != nil, TimedOut: fired,
			Timeout: s.Timeout, Extensions: extended, Now: h.Clock()})
		out.OutputCut = cut
	}
	ran := total.Sub(prev)
	out.Usage, out.RawUsage = ran.State(), ran.Raw()
	out.CostMicros, out.CostEstimated = cost(set, model, out.Usage)
	if len(ro.Commands) > len(st.Commands) {
		st.Commands = ro.Commands
	}
	out.PushAttempts = st.pushAttempts()
	out.Denials = st.denials()
	return run{out: out, thread: st.ThreadID, total: total}
}

// cost prices u at the agent's prices of model (or of "*", any model):
// estimated, since the CLI reports no cost; 0 when there is no price.
func cost(set *Settings, model string, u state.Usage) (int64, bool) {
	p, ok := set.Prices[model]
	if !ok {
		p, ok = set.Prices["*"]
	}
	if !ok || u == (state.Usage{}) {
		return 0, false
	}
	return p.Micros(u), true
}

// writeFailed is the outcome of a session whose files could not be
// written (err, an *fs.PathError): interrupted, the caller stops the wave.
func writeFailed(err error, cut int64) agent.Outcome {
	return agent.Outcome{Status: state.StepInterrupted, Cause: "the session's files could not be written: " + err.Error(), WriteErr: err, OutputCut: cut}
}

// Recount implements agent.Adapter: the tokens of a session stopped with
// the cadence that ran it, from its stdout logs (logPrefix+".json" and its
// formatting retry's: the thread id and the last turn's total) and the
// thread's rollout file under Home(env) (a token count per response, so
// the turn in flight too), the larger total of the two. The cost is not
// recounted (the prices are the agent's, which Recount is not given).
func (*Adapter) Recount(sessionID, dir, logPrefix string, env []string) (agent.Spent, bool) {
	var st Stream
	for _, p := range []string{logPrefix + ".json", logPrefix + ".format-retry.json"} {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		s := Parse(io.LimitReader(f, maxRollout))
		f.Close()
		if st.ThreadID == "" {
			st.ThreadID = s.ThreadID
		}
		if s.Turns > 0 {
			st.Total, st.Turns = s.Total, st.Turns+s.Turns
		}
	}
	if st.ThreadID == "" {
		return agent.Spent{}, false
	}
	total := st.Total
	if ro, ok := ReadRollout(RolloutPath(Home(env), st.ThreadID)); ok && ro.HasTotal && ro.Total.InputTokens >= total.InputTokens {
		total = ro.Total
	}
	u := total.State()
	if u == (state.Usage{}) {
		return agent.Spent{}, false
	}
	return agent.Spent{Usage: u}, true
}

// addRaw is the sum of two raw usages, field by field (nil when both are).
func addRaw(a, b map[string]int64) map[string]int64 {
	if a == nil && b == nil {
		return nil
	}
	sum := map[string]int64{}
	for k, v := range a {
		sum[k] += v
	}
	for k, v := range b {
		sum[k] += v
	}
	return sum
}
