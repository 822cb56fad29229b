// Package agent runs agent sessions: the Claude Code CLI (and CLIs that
// behave like it) as `claude -p BRIEF --output-format stream-json --verbose
// --json-schema SCHEMA --model M --session-id UUID …` in the lot's worktree,
// in its own process group, with an explicit environment; it follows the
// stream for live usage and retries, classifies the result, and makes sure
// nothing the session started outlives it.
package agent

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/schemas"
	"github.com/cadence-run/cadence/spec"
)

// MaxExtensions bounds how many times a write step that still makes
// progress at its timeout is given more time.
const MaxExtensions = 3

// FormatRetryPrompt asks a session that ended without its report for the
// report alone (the one formatting retry, with --resume).
const FormatRetryPrompt = "Your work is finished. Do not change anything. Now call the StructuredOutput tool once with your report."

// Runner runs sessions of Claude Code–compatible CLIs. It implements
// executor.Agent.
type Runner struct {
	// Env is the environment sessions start from (the user's).
	Env []string
	// Command resolves an agent's executable (CADENCE_CLAUDE_BIN and such).
	Command func(*spec.Agent) string
	// Grace is the time between SIGTERM and SIGKILL when a session is stopped.
	Grace time.Duration
	// NewSessionID makes the id of a relaunched session.
	NewSessionID func() string
	// Now is the clock.
	Now func() time.Time
}

// Args returns the command-line arguments of a session: a new one
// (--session-id) or, with resume, the next turn of an existing one.
func Args(s executor.Session, prompt string, resume bool) ([]string, error) {
	schema := SchemaFor(s.Step)
	b, err := schemas.FS.ReadFile(schema)
	if err != nil {
		return nil, err
	}
	b, err = cliSchema(b)
	if err != nil {
		return nil, err
	}
	a := s.Agent
	args := []string{"-p", prompt, "--output-format", "stream-json", "--verbose", "--json-schema", string(b), "--model", s.Model}
	if resume {
		args = append(args, "--resume", s.SessionID)
	} else {
		args = append(args, "--session-id", s.SessionID)
	}
	if a.PermissionMode != "" {
		args = append(args, "--permission-mode", a.PermissionMode)
	}
	if len(a.AllowedTools) > 0 {
		args = append(args, "--allowedTools", strings.Join(a.AllowedTools, " "))
	}
	if len(a.DisallowedTools) > 0 {
		args = append(args, "--disallowedTools", strings.Join(a.DisallowedTools, " "))
	}
	for _, d := range s.AddDirs {
		args = append(args, "--add-dir", d)
	}
	if a.AppendSystemPrompt != "" {
		args = append(args, "--append-system-prompt", a.AppendSystemPrompt)
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

// SchemaFor names the report schema of a step kind.
func SchemaFor(k state.StepKind) string {
	switch k {
	case state.StepPrecheck:
		return "precheck.schema.json"
	case state.StepReview, state.StepRecheck:
		return "review.schema.json"
	}
	return "implement.schema.json"
}

// Run runs one session, with the retries the design allows and no others:
// one formatting retry (--resume, asking for the report only) when a
// successful session gave no report, and one fresh relaunch of a read-only
// session that was cut. A write step is never run again automatically.
func (r *Runner) Run(ctx context.Context, s executor.Session) executor.Outcome {
	out := r.once(ctx, s, s.Brief, false, s.LogPrefix)
	switch {
	case ctx.Err() != nil:
	case out.Status == state.StepFailed && out.Cause == executor.CauseNoReport:
		retry := r.once(ctx, s, FormatRetryPrompt, true, s.LogPrefix+".format-retry")
		retry.Usage = retry.Usage.Add(out.Usage)
		retry.PushAttempts = append(out.PushAttempts, retry.PushAttempts...)
		// total_cost_usd already adds up across resumes of one session.
		retry.CostMicros = max(retry.CostMicros, out.CostMicros)
		out = retry
	case out.Status == state.StepCut && s.ReadOnly && r.NewSessionID != nil:
		s2 := s
		s2.SessionID = r.NewSessionID()
		again := r.once(ctx, s2, s.Brief, false, s.LogPrefix+".relaunch")
		again.Usage = again.Usage.Add(out.Usage)
		again.CostMicros += out.CostMicros
		out = again
	}
	return out
}

// once runs the CLI a single time.
func (r *Runner) once(ctx context.Context, s executor.Session, prompt string, resume bool, logPrefix string) executor.Outcome {
	fail := func(err error) executor.Outcome {
		return executor.Outcome{Status: state.StepFailed, Cause: err.Error()}
	}
	args, err := Args(s, prompt, resume)
	if err != nil {
		return fail(err)
	}
	stdout, err := os.Create(logPrefix + ".json")
	if err != nil {
		return fail(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(logPrefix + ".err")
	if err != nil {
		return fail(err)
	}
	defer stderr.Close()
	env := append(append(append([]string{}, r.Env...), s.Env...),
		"CADENCE_WAVE="+s.Wave, "CADENCE_LOT="+s.Lot, "CADENCE_SESSION="+s.SessionID,
		"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1",
		"CLAUDE_CODE_MAX_RETRIES="+strconv.Itoa(s.Agent.MaxRetries))
	command := s.Agent.Command
	if r.Command != nil {
		command = r.Command(s.Agent)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timedOut := r.watchTimeout(sctx, cancel, s)
	pr, pw := io.Pipe()
	// API retries are shown as they happen (a rate-limited session is
	// otherwise silent for minutes); tool calls only feed the token count.
	watch := newStreamWatch(s.Progress, func(note string) {
		if s.Note != nil && strings.HasPrefix(note, "API retry") {
			s.Note(note)
		}
	})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		watch.consume(pr)
		_, _ = io.Copy(io.Discard, pr)
	}()
	res, rerr := proc.Run(sctx, proc.Cmd{Path: command, Args: args, Dir: s.Dir, Env: env,
		Stdout: io.MultiWriter(stdout, pw), Stderr: stderr, Grace: r.Grace, Started: s.Started})
	pw.Close()
	wg.Wait()
	killMarked(s.SessionID)
	if rerr != nil {
		return fail(rerr)
	}
	errText, _ := os.ReadFile(logPrefix + ".err")
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	out := Classify(Ended{Proc: res, Result: watch.lastResult(), Stderr: errText, Step: s.Step,
		Cancelled: ctx.Err() != nil, TimedOut: timedOut(), Now: now})
	out.PushAttempts = watch.pushAttempts()
	if watch.lastResult() == nil || out.Usage == (state.Usage{}) {
		// No result line (killed, cut): the transcript has each turn's final
		// usage; the stream only its usage when the turn began (output
		// tokens 1), so it is the fallback.
		if u, ok := transcriptUsage(TranscriptPath(envValue(env, "HOME"), s.Dir, s.SessionID)); ok {
			out.Usage = u
		} else {
			out.Usage = watch.total()
		}
	}
	return out
}

// watchTimeout cancels the session at its timeout, unless it is a write
// step whose worktree still moves (s.Moved), which gets more time, at most
// MaxExtensions times. The returned func says whether it timed out.
func (r *Runner) watchTimeout(ctx context.Context, cancel context.CancelFunc, s executor.Session) func() bool {
	var mu sync.Mutex
	fired := false
	if s.Timeout <= 0 {
		return func() bool { return false }
	}
	go func() {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		for ext := 0; ; ext++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !s.ReadOnly && ext < MaxExtensions && s.Moved != nil && s.Moved() {
				if s.Note != nil {
					s.Note("timeout reached while the worktree still changes: extended")
				}
				t.Reset(max(s.Timeout/3, time.Second))
				continue
			}
			mu.Lock()
			fired = true
			mu.Unlock()
			cancel()
			return
		}
	}()
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return fired
	}
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
