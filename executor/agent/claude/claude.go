// Package claude is the adapter of the Claude Code CLI (and CLIs that
// behave like it, reached with command = "..." in an agent block of kind
// "claude"): it runs a session as `claude -p --output-format stream-json
// --verbose --json-schema SCHEMA --model M --session-id UUID …` with the
// brief on standard input (no argument-length limit), in the lot's
// worktree, in its own process group, with an explicit environment, and,
// unless the agent says `sandbox = false` or the machine cannot
// (SandboxMissing), in Claude Code's own OS sandbox, writable only where
// the lot's work goes (sandboxSettings), cleaning up after it
// (leftovers). It follows the stream for live usage and retries,
// classifies the result, counts usage from the transcript when the result
// is missing, and makes sure nothing the session started outlives it.
// Every fact about Claude Code's flags, JSON and files lives here
// (reference: shared/reference/claude-cli.md).
package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/schemas"
)

// Kind is the agent kind this adapter serves, the default of an agent block.
const Kind = "claude"

// MinVersion is the oldest Claude Code CLI cadence drives: it needs
// --json-schema, --session-id and stream-json results with structured_output.
const MinVersion = "2.1.0"

// FormatRetryPrompt asks a session that ended without its report for the
// report alone (the one formatting retry, with --resume).
const FormatRetryPrompt = "Your work is finished. Do not change anything. Now call the StructuredOutput tool once with your report."

// Adapter runs sessions of Claude Code–compatible CLIs. It implements
// agent.Adapter and agent.Sandboxer; one value serves every session, and
// its zero value is ready. Its state is what sessions share: the sandbox
// checks (per PATH) and the folders sandboxed sessions are using.
type Adapter struct {
	checks sandboxChecks
	left   leftovers
	// browser is where UX sessions' browser pieces are (WithBrowser).
	browser agent.BrowserSetup
}

var (
	_ agent.Adapter   = (*Adapter)(nil)
	_ agent.Sandboxer = (*Adapter)(nil)
)

// New returns the Claude Code adapter, for agent.NewRegistry.
func New() *Adapter { return &Adapter{} }

// Kind implements agent.Adapter: "claude".
func (*Adapter) Kind() string { return Kind }

// Tool implements agent.Adapter: CADENCE_CLAUDE_BIN overrides the
// executable of agent "claude"; `claude --version` prints "2.1.328 (Claude
// Code)".
func (*Adapter) Tool() agent.Tool {
	return agent.Tool{
		Command:     "claude",
		EnvOverride: "CADENCE_CLAUDE_BIN",
		VersionArgs: []string{"--version"},
		MinVersion:  MinVersion,
		Install:     "install Claude Code: npm install -g @anthropic-ai/claude-code, or set CADENCE_CLAUDE_BIN",
	}
}

// KillLeftovers implements agent.Adapter (see killMarked).
func (*Adapter) KillLeftovers(sessionID string) int { return killMarked(sessionID) }

// Sandbox is how a session runs in the CLI's sandbox.
type Sandbox struct {
	// Cache is the folder its build tools cache into (see cacheEnv),
	// writable in the sandbox; "" for none.
	Cache string
}

// Args returns the command-line arguments of a session: a new one
// (--session-id) or, with resume, the next turn of an existing one. The
// prompt is not among them: the CLI reads it from standard input (`-p`
// with no prompt argument), so a brief of any length passes (Linux refuses
// an argument over 128 KiB). With a sandbox (nil: none), the session runs
// in the CLI's sandbox (--settings, see sandboxSettings), and a bare file
// tool among the agent's allowed tools (Edit, Write, MultiEdit,
// NotebookEdit, which run outside the sandbox) is allowed in the session's
// worktrees only. A read-only session (s.ReadOnly) gets no file tool and
// no git command that writes, whatever the agent allows (readonly.go).
// Every session loads the user's settings and cadence's only, no MCP
// server but a session's browser (browser.go: s.Browser, whose
// configuration the caller wrote), and of the repository only its
// CLAUDE.md (projectconfig.go).
func Args(s agent.Session, resume bool, sandbox *Sandbox) ([]string, error) {
	if s.ReportSchema == "" {
		return nil, fmt.Errorf("session of step %s: no report schema", s.Step)
	}
	b, err := schemas.FS.ReadFile(s.ReportSchema)
	if err != nil {
		return nil, err
	}
	b, err = cliSchema(b)
	if err != nil {
		return nil, err
	}
	a := settingsOf(s.Agent)
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--json-schema", string(b), "--model", s.Model}
	if resume {
		args = append(args, "--resume", s.SessionID)
	} else {
		args = append(args, "--session-id", s.SessionID)
	}
	if s.FallbackModel != "" && s.FallbackModel != s.Model {
		// The CLI refuses a fallback equal to the main model.
		args = append(args, "--fallback-model", s.FallbackModel)
	}
	args = append(args, isolationArgs(s.Dir)...)
	var browserAllow, browserDeny []string
	if s.Browser != nil {
		var mcpConfig string
		mcpConfig, browserAllow, browserDeny = browserArgs(s)
		args = append(args, "--mcp-config", mcpConfig, "--strict-mcp-config")
	}
	if a.PermissionMode != "" {
		args = append(args, "--permission-mode", a.PermissionMode)
	}
	allowed, fileEdits := a.AllowedTools, false
	if sandbox != nil || s.ReadOnly {
		allowed = nil
		for _, t := range a.AllowedTools {
			switch {
			case s.ReadOnly && fileTools[toolName(t)]:
				continue // readonly.go
			case sandbox != nil && fileTools[t]:
				fileEdits = true
				continue
			}
			allowed = append(allowed, t)
		}
	}
	allowed = append(allowed[:len(allowed):len(allowed)], browserAllow...)
	if len(allowed) > 0 {
		args = append(args, "--allowedTools", strings.Join(allowed, " "))
	}
	denied := append(a.DisallowedTools[:len(a.DisallowedTools):len(a.DisallowedTools)], browserDeny...)
	if s.ReadOnly {
		denied = append(denied, readOnlyDenied()...)
	}
	if len(denied) > 0 {
		args = append(args, "--disallowedTools", strings.Join(denied, " "))
	}
	for _, d := range s.AddDirs {
		args = append(args, "--add-dir", d)
	}
	if a.AppendSystemPrompt != "" {
		args = append(args, "--append-system-prompt", a.AppendSystemPrompt)
	}
	if sandbox != nil {
		doc, err := sandboxSettings(s, fileEdits, sandbox.Cache)
		if err != nil {
			return nil, err
		}
		args = append(args, "--settings", string(doc))
	}
	return args, nil
}

// cliSchema prepares a report schema for --json-schema: the CLI 2.1.328
// refuses a document whose "$schema" names draft 2020-12 ("no schema with
// key or ref"), so the "$schema" and "$id" keys are dropped; the rest is
// plain JSON Schema it understands.
func cliSchema(b []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	delete(doc, "$schema")
	delete(doc, "$id")
	return json.Marshal(doc)
}

// Run runs one session, with the retries the design allows and no others:
// one formatting retry (--resume, asking for the report only) when a
// successful session gave no report, and one fresh relaunch of a read-only
// session that was cut. A write step is never run again automatically.
func (r *Adapter) Run(ctx context.Context, s agent.Session, h agent.Host) agent.Outcome {
	out := r.once(ctx, s, h, s.Brief, false, s.LogPrefix)
	switch {
	case ctx.Err() != nil:
	case out.Status == state.StepFailed && out.Cause == agent.CauseNoReport:
		// The report alone needs no browser: the evidence is the first run's.
		s2 := s
		s2.Browser = nil
		retry := r.once(ctx, s2, h, FormatRetryPrompt, true, s.LogPrefix+".format-retry")
		retry.Browser = out.Browser
		retry.Usage = retry.Usage.Add(out.Usage)
		retry.OutputCut += out.OutputCut
		retry.PushAttempts = append(out.PushAttempts, retry.PushAttempts...)
		retry.Denials = append(out.Denials, retry.Denials...)
		if retry.CostEstimated {
			// An estimate prices the retry's own turns only.
			retry.CostMicros += out.CostMicros
		} else {
			// total_cost_usd already adds up across resumes of one session.
			retry.CostMicros = max(retry.CostMicros, out.CostMicros)
		}
		retry.CostEstimated = retry.CostEstimated || out.CostEstimated
		out = retry
	case out.Status == state.StepCut && s.ReadOnly && h.NewSessionID != nil:
		s2 := s
		s2.SessionID = h.NewSessionID()
		again := r.once(ctx, s2, h, s.Brief, false, s.LogPrefix+".relaunch")
		again.Usage = again.Usage.Add(out.Usage)
		again.OutputCut += out.OutputCut
		again.CostMicros += out.CostMicros
		again.Denials = append(out.Denials, again.Denials...)
		again.CostEstimated = again.CostEstimated || out.CostEstimated
		out = again
	}
	out.RawUsage = rawUsage(out.Usage)
	return out
}

// once runs the CLI a single time.
func (r *Adapter) once(ctx context.Context, s agent.Session, h agent.Host, prompt string, resume bool, logPrefix string) (out agent.Outcome) {
	var watch *streamWatch
	var browserCause string
	if s.Browser != nil {
		defer func() { out.Browser = sessionEvidence(watch, browserCause) }()
	}
	fail := func(err error) agent.Outcome {
		return agent.Outcome{Status: state.StepFailed, Cause: err.Error()}
	}
	env := append(append(append(append([]string{}, h.Env...), s.Env...), agent.MarkEnv(s)...),
		"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1", claudeMDEnv,
		"CLAUDE_CODE_MAX_RETRIES="+strconv.Itoa(settingsOf(s.Agent).MaxRetries))
	var sandbox *Sandbox
	if r.sandboxed(ctx, s, env) {
		sandbox = &Sandbox{Cache: sandboxCache(env)}
		if sandbox.Cache != "" && os.MkdirAll(sandbox.Cache, 0o755) == nil {
			env = append(env, cacheEnv(env, sandbox.Cache)...)
		} else {
			sandbox.Cache = ""
		}
		env = append(env, excludesEnv(ctx, env, s.Dir, logPrefix)...)
	}
	command := h.Command
	if command == "" {
		command = s.Agent.Command
	}
	if s.Browser != nil {
		if browserCause = r.browserSession(s, env); browserCause != "" {
			// The session goes on without a browser (agent.Session.Browser).
			s.Browser = nil
		}
	}
	args, err := Args(s, resume, sandbox)
	if err != nil {
		return fail(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	files, err := agent.OpenSessionFiles(logPrefix, s.LogLimit, cancel)
	if err != nil {
		return writeFailed(err, 0)
	}
	timeout := agent.WatchTimeout(sctx, cancel, s)
	pr, pw := io.Pipe()
	// API retries are shown as they happen (a rate-limited session is
	// otherwise silent for minutes); tool calls only feed the token count.
	watch = newStreamWatch(s.Progress, func(note string) {
		if s.Note != nil && strings.HasPrefix(note, "API retry") {
			s.Note(note)
		}
	})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		watch.consume(pr, files.Stdout())
	}()
	var hold []*os.File
	if s.SlotLock != nil {
		hold = append(hold, s.SlotLock)
	}
	if sandbox != nil {
		end := r.left.begin(sandboxRoots(worktrees(s)), envValue(env, "PATH"), s.Note)
		defer end() // after KillLeftovers: nothing of the session runs then
	}
	res, rerr := proc.Run(sctx, proc.Cmd{Path: command, Args: args, Dir: workDir(s), Env: env, Stdin: strings.NewReader(prompt),
		Stdout: pw, Stderr: files.Stderr(), Grace: h.Grace, Supervisor: h.Supervisor, Started: s.Started, Hold: hold, Limits: s.Limits})
	pw.Close()
	wg.Wait()
	r.KillLeftovers(s.SessionID)
	werr, cut := files.Close(), files.Cut()
	if werr != nil {
		// A file could not be written: the session was ended (cancel).
		out := writeFailed(werr, cut)
		out.Usage, out.CostMicros, out.CostEstimated = r.spent(watch, env, s)
		return out
	}
	if rerr != nil {
		return fail(rerr)
	}
	errText := agent.ErrTail(logPrefix, s.LogLimit)
	fired, extended := timeout()
	out = Classify(Ended{Proc: res, Result: watch.lastResult(), Stderr: errText, Step: s.Step, ReportSchema: s.ReportSchema,
		Cancelled: ctx.Err() != nil, TimedOut: fired, Timeout: s.Timeout, Extensions: extended, Now: h.Clock(),
		RateLimitReset: watch.rateLimitReset(), Resumed: resume})
	out.PushAttempts = watch.pushAttempts()
	out.Denials = watch.deniedCalls()
	out.OutputCut = cut
	if out.Status == state.StepQuota && out.ResetAt == nil {
		out.ResetAt = quotaReset(h.Clock(), transcriptQuotaText(transcriptOf(env, s)))
	}
	if watch.lastResult() == nil || out.Usage == (state.Usage{}) {
		// No result line (killed, cut): count what the stream and the
		// transcript saw.
		u, micros, estimated := r.spent(watch, env, s)
		out.Usage = u
		if out.CostMicros == 0 && u != (state.Usage{}) {
			out.CostMicros, out.CostEstimated = micros, estimated
		}
		return out
	}
	// A result that leaves out a turn the stream saw (sessionUsage).
	out.Usage = sessionUsage(out.Usage, watch.seen())
	return out
}

// spent counts a session that ended without its result line from the
// turns the stream and the transcript saw, and prices them at list prices
// (an estimate).
func (*Adapter) spent(watch *streamWatch, env []string, s agent.Session) (state.Usage, int64, bool) {
	t := watch.seen()
	tr, _ := transcriptTurns(transcriptOf(env, s))
	t.merge(tr)
	u := t.total()
	if u == (state.Usage{}) {
		return u, 0, false
	}
	return u, t.costMicros(), true
}

// writeFailed is the outcome of a session whose files could not be
// written (err, an *fs.PathError): interrupted, the caller stops the wave.
func writeFailed(err error, cut int64) agent.Outcome {
	return agent.Outcome{Status: state.StepInterrupted, Cause: "the session's files could not be written: " + err.Error(), WriteErr: err, OutputCut: cut}
}

// Recount implements agent.Adapter: the tokens of a session that ran in
// dir and was stopped with the cadence that ran it, from its stdout log
// (logPrefix+".json", the stream as far as it was read: it has the turn in
// flight; its result line, when it has one, is the CLI's own count) and its
// transcript (TranscriptPath with env, the user's
// environment the session started from), each turn counted once, and
// their cost at list prices (an estimate). It reports false when neither
// has a turn.
func (*Adapter) Recount(sessionID, dir, logPrefix string, env []string) (agent.Spent, bool) {
	t := newTurns()
	if f, err := os.Open(logPrefix + ".json"); err == nil {
		w := newStreamWatch(nil, nil)
		w.consume(f, nil)
		f.Close()
		var r result
		if b := w.lastResult(); b != nil && json.Unmarshal(b, &r) == nil && r.Type == "result" && r.Usage != nil {
			// It ended before its cadence: the CLI's own count, with the
			// turns its usage leaves out (sessionUsage).
			return agent.Spent{Usage: sessionUsage(r.usage(), w.turns), CostMicros: int64(r.TotalCostUSD*1e6 + 0.5)}, true
		}
		t.merge(w.turns)
	}
	tr, _ := transcriptTurns(TranscriptPath(env, dir, sessionID))
	t.merge(tr)
	if len(t.order) == 0 {
		return agent.Spent{}, false
	}
	return agent.Spent{Usage: t.total(), CostMicros: t.costMicros(), CostEstimated: true}, true
}

// sandboxed says whether session s runs in the CLI's sandbox: unless its
// agent turns it off (sandbox = false) or the machine cannot run it
// (SandboxMissing with the session's environment: then the CLI would warn
// and run every command unsandboxed, or refuse to start).
func (r *Adapter) sandboxed(ctx context.Context, s agent.Session, env []string) bool {
	return s.Agent != nil && !s.Agent.NoSandbox && s.Dir != "" && r.SandboxMissing(ctx, env) == ""
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
