package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
)

// result is the part of the CLI's result line cadence reads.
type result struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	IsError          bool            `json:"is_error"`
	Result           string          `json:"result"`
	StructuredOutput json.RawMessage `json:"structured_output"`
	TotalCostUSD     float64         `json:"total_cost_usd"`
	TerminalReason   string          `json:"terminal_reason"`
	APIErrorStatus   *int            `json:"api_error_status"`
	APIErrorType     string          `json:"api_error_type"`
	// APIError is "connection_failed" when no HTTP answer came.
	APIError   string                    `json:"api_error"`
	ModelUsage map[string]modelUsageJSON `json:"modelUsage"`
	Errors     []string                  `json:"errors"`
	Usage      *usageJSON                `json:"usage"`
	NumTurns   int                       `json:"num_turns"`
}

// Ended is what Classify reads: how the process ended and what it printed.
type Ended struct {
	Proc proc.Result
	// Result is the CLI's last result line (nil when it printed none).
	Result []byte
	// Stderr is what it wrote on stderr.
	Stderr []byte
	// Step is the session's step kind, named in a timeout's cause.
	Step state.StepKind
	// ReportSchema is the file name of the report's schema in package
	// schemas (agent.Session.ReportSchema): the report is checked against
	// it and read (agent.DecodeReport).
	ReportSchema string
	// Cancelled and TimedOut say whether cadence stopped it, and why;
	// Timeout is the step's limit and Extensions how many times it was
	// extended (agent.WatchTimeout), for the cause.
	Cancelled, TimedOut bool
	Timeout             time.Duration
	Extensions          int
	// Now is the clock, for reset times given as a delay.
	Now time.Time
	// RateLimitReset is the reset time of the stream's rejected
	// rate_limit_event, if any (quota.go).
	RateLimitReset *time.Time
	// Resumed says the CLI ran with --resume: its result's modelUsage
	// then covers the whole session, earlier invocations included
	// (measured, 2.1.328), so only its usage counts for this one.
	Resumed bool
}

// Classify turns a finished session into an outcome. The exit code alone
// says little (SIGINT exits 0, a missing report exits 0, an API error has
// subtype "success"): a session is ok only when its result says no error
// and carries a report that fits the step's schema.
func Classify(e Ended) agent.Outcome {
	var r result
	parsed := len(e.Result) > 0 && json.Unmarshal(e.Result, &r) == nil && r.Type == "result"
	var o agent.Outcome
	if parsed {
		o.Usage = r.usage()
		if e.Resumed {
			o.Usage = r.Usage.usage()
		}
		o.CostMicros = int64(r.TotalCostUSD*1e6 + 0.5)
	}
	switch {
	case e.Cancelled:
		o.Status, o.Cause = state.StepInterrupted, "stopped by cadence"
	case e.TimedOut:
		o.Status, o.Cause = state.StepTimedOut, agent.TimeoutCause(string(e.Step), e.Timeout, e.Extensions)
	case e.Proc.LimitHit != "":
		// The supervisor ended the tree (or the kernel the CLI): whatever
		// the CLI printed last is not the session's end.
		o.Status, o.LimitHit = state.StepFailed, e.Proc.LimitHit
		o.Cause = "reached its " + string(e.Proc.LimitHit) + " limit: its processes were ended"
		if e.Proc.LimitHit == proc.LimitLeftCgroup {
			o.Cause = "left its cgroup (its limits could not hold): its processes were ended"
		}
	case !parsed && e.Proc.Signal != 0:
		o.Status, o.Cause = state.StepCut, "killed by "+e.Proc.Signal.String()+" before its result"
	case !parsed && isQuotaText(string(e.Stderr)):
		o.Status, o.Cause = state.StepQuota, lastLine(e.Stderr)
		o.ResetAt = quotaResetOf(e, "")
	case !parsed:
		o.Status, o.Cause = state.StepFailed, fmt.Sprintf("exit %d without a result", e.Proc.ExitCode)
		if l := lastLine(e.Stderr); l != "" {
			o.Cause += ": " + l
		}
	case r.Subtype == "error_during_execution":
		// What SIGINT makes of a session (and it exits 0).
		o.Status, o.Cause = state.StepCut, "aborted: "+r.TerminalReason
	case r.IsError && isQuota(r):
		o.Status, o.Cause = state.StepQuota, r.Result
		o.ResetAt = quotaResetOf(e, r.Result)
	case r.IsError:
		o.Status, o.Cause, o.API = state.StepFailed, failCause(r), apiFailure(r)
	case len(bytes.TrimSpace(r.StructuredOutput)) == 0 || string(r.StructuredOutput) == "null":
		o.Status, o.Cause = state.StepFailed, agent.CauseNoReport
	default:
		rep, err := agent.DecodeReport(r.StructuredOutput, e.ReportSchema)
		if err != nil {
			o.Status, o.Cause = state.StepFailed, "the report does not fit its schema: "+err.Error()
			break
		}
		o.Status, o.Report = state.StepOK, rep
	}
	return o
}

// failCause says why an errored session failed, in the user's terms.
func failCause(r result) string {
	switch r.Subtype {
	case "error_max_turns":
		return fmt.Sprintf("reached the maximum number of turns (%d)", r.NumTurns)
	case "error_max_structured_output_retries":
		return "gave up on the structured report after repeated schema errors"
	case "error_max_budget_usd":
		return "reached the session's dollar budget"
	}
	msg := firstNonEmpty(r.Result, strings.Join(r.Errors, "; "), r.TerminalReason, r.Subtype)
	if r.APIErrorStatus != nil {
		return fmt.Sprintf("API error %d: %s", *r.APIErrorStatus, msg)
	}
	return msg
}

// isQuota recognises a usage or rate limit: HTTP 429, a rate_limit error,
// or a usage-limit message.
func isQuota(r result) bool {
	if r.APIErrorStatus != nil && *r.APIErrorStatus == 429 {
		return true
	}
	if strings.Contains(r.APIErrorType, "rate_limit") {
		return true
	}
	t := strings.ToLower(r.Result)
	return strings.Contains(t, "rate limit") || strings.Contains(t, "usage limit") || strings.Contains(t, "(429)")
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
