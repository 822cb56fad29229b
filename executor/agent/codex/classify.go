package codex

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
)

// Ended is what one run of `codex exec` left, for Classify.
type Ended struct {
	Proc   proc.Result
	Stream Stream
	// Rollout is the thread's rollout file as read after the run (its
	// codex_error_info); zero when there was none.
	Rollout Rollout
	// Stderr is the tail of the run's standard error.
	Stderr string
	// ReportSchema is the step's report schema (agent.Session).
	ReportSchema string
	Step         state.StepKind
	// Cancelled: the caller's context ended; TimedOut: the session's own
	// timeout fired (after Extensions extensions of Timeout).
	Cancelled, TimedOut bool
	Timeout             time.Duration
	Extensions          int
	// Now is when the run ended, the clock of a reset time without a date.
	Now time.Time
}

// Classify turns the end of a run into an outcome, its usage left for
// the caller (the thread's running total needs the previous run's).
// Exit codes (0.171.0): 0 the turn completed, whatever its commands did
// and whatever the message says; 1 turn.failed or a start-up error; 2 a
// usage error; 143 SIGTERM. A completed turn is ok with its report
// (DecodeReport), or failed with agent.CauseNoReport. A failed turn is
// classified by the rollout's codex_error_info, else the message.
func Classify(e Ended) agent.Outcome {
	switch {
	case e.Cancelled:
		return agent.Outcome{Status: state.StepInterrupted, Cause: "stopped by cadence"}
	case e.TimedOut:
		return agent.Outcome{Status: state.StepTimedOut, Cause: agent.TimeoutCause(string(e.Step), e.Timeout, e.Extensions)}
	case e.Proc.LimitHit == proc.LimitLeftCgroup:
		return agent.Outcome{Status: state.StepFailed, LimitHit: e.Proc.LimitHit,
			Cause: "left its cgroup (its limits could not hold): its processes were ended"}
	case e.Proc.LimitHit != "":
		return agent.Outcome{Status: state.StepFailed, LimitHit: e.Proc.LimitHit,
			Cause: "reached its " + string(e.Proc.LimitHit) + " limit: its processes were ended"}
	case (e.Proc.Signal != 0 || e.Proc.ExitCode == 143) && e.Stream.Turns == 0:
		// 143: the CLI ends on SIGTERM with 143 (its tool children killed).
		if e.Proc.Signal == 0 {
			return agent.Outcome{Status: state.StepCut, Cause: "ended by SIGTERM before the turn ended"}
		}
		return agent.Outcome{Status: state.StepCut, Cause: "killed by " + e.Proc.Signal.String() + " before the turn ended"}
	}
	if e.Proc.ExitCode == 0 && e.Stream.Failed == "" && e.Stream.Turns > 0 {
		r, err := DecodeReport(e.Stream.Message, e.ReportSchema)
		if err != nil {
			return agent.Outcome{Status: state.StepFailed, Cause: agent.CauseNoReport}
		}
		return agent.Outcome{Status: state.StepOK, Report: r}
	}
	msg := firstNonEmpty(e.Stream.Failed, e.Rollout.ErrorText, last(e.Stream.Errors), lastLine(e.Stderr))
	if msg == "" {
		msg = "codex exited with status " + strconv.Itoa(e.Proc.ExitCode)
	}
	out := agent.Outcome{Status: state.StepFailed, Cause: msg}
	switch info := e.Rollout.ErrorInfo; {
	case info == "usage_limit_exceeded" && isCredit(msg):
		out.API = agent.APICredit
	case info == "usage_limit_exceeded":
		out.Status = state.StepQuota
		out.ResetAt = ResetTime(msg, e.Now)
	case info == "server_overloaded" || info == "internal_server_error":
		out.API = agent.APIOverloaded
	case info == "response_too_many_failed_attempts" && strings.Contains(msg, "429"):
		out.API = agent.APIOverloaded
	case info == "response_too_many_failed_attempts" || info == "response_stream_disconnected" ||
		info == "response_stream_connection_failed":
		out.API = agent.APINetwork
	case info == "unauthorized" || strings.Contains(msg, "401 Unauthorized") || strings.Contains(msg, "403 Forbidden"):
		out.API = agent.APIAuth
	case info == "http_connection_failed" && isUnreachable(msg):
		out.API = agent.APIUnreachable
	case info == "http_connection_failed":
		out.API = agent.APINetwork
	case info == "":
		out.API = classifyText(msg)
	}
	return out
}

// classifyText classes a failure the rollout did not (no rollout file,
// an older CLI) by its message.
func classifyText(msg string) agent.APIFailure {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "401 unauthorized") || strings.Contains(m, "403 forbidden"):
		return agent.APIAuth
	case isCredit(msg):
		return agent.APICredit
	case strings.Contains(m, "at capacity") || strings.Contains(m, "high demand") || strings.Contains(m, "429") ||
		strings.Contains(m, "overloaded"):
		return agent.APIOverloaded
	case isUnreachable(msg):
		return agent.APIUnreachable
	case strings.Contains(m, "stream disconnected") || strings.Contains(m, "connection reset"):
		return agent.APINetwork
	}
	return agent.APINone
}

// isCredit: the account cannot pay (OpenAI's insufficient_quota, which
// Codex reports as usage_limit_exceeded with this message).
func isCredit(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "check your plan and billing") || strings.Contains(m, "insufficient_quota")
}

func isUnreachable(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "connection refused") || strings.Contains(m, "dns error") || strings.Contains(m, "failed to lookup address")
}

var (
	// "… or try again at 5:58 AM." (Codex 0.171.0, the local time of a
	// reset within a day).
	resetClock = regexp.MustCompile(`try again at (\d{1,2}):(\d{2}) ?([AP]M)`)
	// "try again at Dec 3rd, 2026 5:58 AM" and similar, a later day.
	resetDate = regexp.MustCompile(`try again at ([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}) (\d{1,2}):(\d{2}) ?([AP]M)`)
)

// ResetTime is when the usage limit of message msg resets, or nil when it
// does not say. A clock time without a date is the next such time after
// now, in now's zone (the CLI's local zone, on the same machine); a time
// at most an hour past is taken as past, not as tomorrow's.
func ResetTime(msg string, now time.Time) *time.Time {
	hm := func(h, m, ampm string) (int, int) {
		hh, _ := strconv.Atoi(h)
		mm, _ := strconv.Atoi(m)
		hh %= 12
		if ampm == "PM" {
			hh += 12
		}
		return hh, mm
	}
	if m := resetDate.FindStringSubmatch(msg); m != nil {
		month, err := time.Parse("Jan", m[1])
		if err == nil {
			d, _ := strconv.Atoi(m[2])
			y, _ := strconv.Atoi(m[3])
			hh, mm := hm(m[4], m[5], m[6])
			t := time.Date(y, month.Month(), d, hh, mm, 0, 0, now.Location())
			return &t
		}
	}
	if m := resetClock.FindStringSubmatch(msg); m != nil {
		hh, mm := hm(m[1], m[2], m[3])
		t := time.Date(now.Year(), now.Month(), now.Day(), hh, mm, 0, 0, now.Location())
		if t.Before(now.Add(-time.Hour)) {
			t = t.AddDate(0, 0, 1)
		}
		return &t
	}
	return nil
}

func last(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[len(xs)-1]
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
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
