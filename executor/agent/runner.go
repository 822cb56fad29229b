// Package agent runs agent sessions: the Claude Code CLI (and CLIs that
// behave like it) as `claude -p BRIEF --output-format json --json-schema …`,
// in the lot's worktree, in its own process group, with an explicit
// environment, and reads the outcome from its result JSON.
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/executor/state"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/schemas"
	"github.com/cadence-run/cadence/spec"
)

// Runner runs sessions of Claude Code–compatible CLIs. It implements
// executor.Agent.
type Runner struct {
	// Env is the environment sessions start from (the user's).
	Env []string
	// Command resolves an agent's executable (CADENCE_CLAUDE_BIN and such).
	Command func(*spec.Agent) string
	// Grace is the time between SIGTERM and SIGKILL when a session is stopped.
	Grace time.Duration
}

// result is the part of the CLI's result JSON cadence reads.
type result struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	IsError          bool            `json:"is_error"`
	Result           string          `json:"result"`
	StructuredOutput json.RawMessage `json:"structured_output"`
	TotalCostUSD     float64         `json:"total_cost_usd"`
	TerminalReason   string          `json:"terminal_reason"`
	APIErrorStatus   *int            `json:"api_error_status"`
	Usage            struct {
		Input      int64 `json:"input_tokens"`
		CacheWrite int64 `json:"cache_creation_input_tokens"`
		CacheRead  int64 `json:"cache_read_input_tokens"`
		Output     int64 `json:"output_tokens"`
	} `json:"usage"`
}

// Args returns the command-line arguments of a session.
func Args(s executor.Session) ([]string, error) {
	schema := "implement.schema.json"
	if s.ReadOnly {
		schema = "review.schema.json"
	}
	b, err := schemas.FS.ReadFile(schema)
	if err != nil {
		return nil, err
	}
	a := s.Agent
	args := []string{"-p", s.Brief, "--output-format", "json", "--json-schema", string(b),
		"--model", s.Model, "--session-id", s.SessionID}
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

// Run runs one session and classifies how it ended.
func (r *Runner) Run(ctx context.Context, s executor.Session) executor.Outcome {
	args, err := Args(s)
	if err != nil {
		return executor.Outcome{Status: state.StepFailed, Cause: err.Error()}
	}
	stdout, err := os.Create(s.LogPrefix + ".json")
	if err != nil {
		return executor.Outcome{Status: state.StepFailed, Cause: err.Error()}
	}
	defer stdout.Close()
	stderr, err := os.Create(s.LogPrefix + ".err")
	if err != nil {
		return executor.Outcome{Status: state.StepFailed, Cause: err.Error()}
	}
	defer stderr.Close()
	env := append(append([]string{}, r.Env...),
		"CADENCE_WAVE="+s.Wave, "CADENCE_LOT="+s.Lot, "CADENCE_SESSION="+s.SessionID,
		"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1",
		"CLAUDE_CODE_MAX_RETRIES="+strconv.Itoa(s.Agent.MaxRetries))
	sctx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	command := s.Agent.Command
	if r.Command != nil {
		command = r.Command(s.Agent)
	}
	res, rerr := proc.Run(sctx, proc.Cmd{Path: command, Args: args, Dir: s.Dir, Env: env, Stdout: stdout, Stderr: stderr, Grace: r.Grace, Started: s.Started})
	if rerr != nil {
		return executor.Outcome{Status: state.StepFailed, Cause: rerr.Error()}
	}
	out, _ := os.ReadFile(s.LogPrefix + ".json")
	errText, _ := os.ReadFile(s.LogPrefix + ".err")
	return Classify(res, out, errText, s.ReadOnly, ctx.Err() != nil)
}

// Classify turns a finished process and its output into an outcome: ok only
// when the result says no error and carries a structured report.
func Classify(res proc.Result, stdout, stderr []byte, readOnly, cancelled bool) executor.Outcome {
	var r result
	parsed := json.Unmarshal(lastJSON(stdout), &r) == nil && r.Type == "result"
	o := executor.Outcome{}
	if parsed {
		o.Usage = state.Usage{Input: r.Usage.Input, CacheWrite: r.Usage.CacheWrite, CacheRead: r.Usage.CacheRead, Output: r.Usage.Output}
		o.CostMicros = int64(r.TotalCostUSD*1e6 + 0.5)
	}
	switch {
	case cancelled:
		o.Status, o.Cause = state.StepInterrupted, "stopped by cadence"
	case res.Stopped:
		o.Status, o.Cause = state.StepTimedOut, "timed out"
	case !parsed && res.Signal != 0:
		o.Status, o.Cause = state.StepCut, "killed by "+res.Signal.String()
	case !parsed:
		o.Status, o.Cause = state.StepFailed, fmt.Sprintf("exit %d without a result: %s", res.ExitCode, lastLine(stderr))
	case r.IsError && isQuota(r):
		o.Status, o.Cause = state.StepQuota, r.Result
	case r.IsError:
		o.Status, o.Cause = state.StepFailed, firstNonEmpty(r.Result, r.TerminalReason, r.Subtype)
	case len(r.StructuredOutput) == 0 || string(r.StructuredOutput) == "null":
		o.Status, o.Cause = state.StepFailed, "the session gave no structured report"
	default:
		var rep executor.Report
		if err := json.Unmarshal(r.StructuredOutput, &rep); err != nil {
			o.Status, o.Cause = state.StepFailed, "unreadable report: "+err.Error()
			break
		}
		o.Status, o.Report = state.StepOK, &rep
	}
	return o
}

func isQuota(r result) bool {
	if r.APIErrorStatus != nil && *r.APIErrorStatus == 429 {
		return true
	}
	t := strings.ToLower(r.Result)
	return strings.Contains(t, "rate limit") || strings.Contains(t, "usage limit") || strings.Contains(t, "(429)")
}

// lastJSON returns the last non-empty line of out (the result line).
func lastJSON(out []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return []byte(lines[len(lines)-1])
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
