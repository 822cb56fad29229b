package claude

import (
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
)

// apiFailure classes the API error an errored result ends on (Classify
// reads a usage or rate limit before: it is a quota, not one of these).
// What the CLI 2.1.328 prints, with CLAUDE_CODE_MAX_RETRIES spent
// (shared/reference/claude-cli.md §5; apierror_test.go has the lines):
// terminal_reason "api_error", api_error_status the HTTP status (null when
// no answer came, then api_error "connection_failed"), api_error_type the
// API's error type, and the result text:
//
//   - 529 or an overloaded error in the stream: "API Error: 529 Overloaded.
//     This is a server-side issue, usually temporary …"; 5xx likewise:
//     APIOverloaded.
//   - "Connection dropped (ECONNRESET)", a timeout: APINetwork.
//   - "Connection refused … (ECONNREFUSED)", "Can't reach the API server …
//     (ENOTFOUND)", an unreachable host or network: APIUnreachable (no
//     answer will come until the user fixes the address or the network).
//   - 401 "Invalid API key · Fix external API key", 403 "Failed to
//     authenticate. API Error: 403 …": APIAuth.
//   - 400 "Credit balance is too low", a billing message: APICredit.
//
// Anything else (a prompt too long, a 4xx about the request) is the
// session's own failure: APINone.
func apiFailure(r result) agent.APIFailure {
	status := 0
	if r.APIErrorStatus != nil {
		status = *r.APIErrorStatus
	}
	if r.TerminalReason != "api_error" && status == 0 && r.APIError == "" {
		return agent.APINone
	}
	text := strings.ToLower(r.Result)
	switch {
	case strings.Contains(text, "credit balance") || strings.Contains(text, "billing") || status == 402:
		return agent.APICredit
	case status == 401 || status == 403 || r.APIErrorType == "authentication_error" || r.APIErrorType == "permission_error":
		return agent.APIAuth
	case status == 529 || status >= 500 || r.APIErrorType == "overloaded_error":
		return agent.APIOverloaded
	case r.APIError == "connection_failed" || status == 0 && strings.Contains(text, "connection"):
		for _, w := range unreachableWords {
			if strings.Contains(text, w) {
				return agent.APIUnreachable
			}
		}
		return agent.APINetwork
	}
	return agent.APINone
}

// unreachableWords mark a connection that never reached the API (lower
// case): the errno names Node.js prints and the CLI's own wording.
var unreachableWords = []string{"econnrefused", "enotfound", "eai_again", "ehostunreach", "enetunreach",
	"connection refused", "can't reach"}

// modelUsageJSON is one model's entry of a result's modelUsage: every turn
// of the invocation (its usage field may leave the last one out).
type modelUsageJSON struct {
	Input      int64 `json:"inputTokens"`
	Output     int64 `json:"outputTokens"`
	CacheRead  int64 `json:"cacheReadInputTokens"`
	CacheWrite int64 `json:"cacheCreationInputTokens"`
}

// usage is the result's usage, or the sum of its modelUsage where that is
// larger (field by field).
func (r result) usage() state.Usage {
	u := r.Usage.usage()
	var m state.Usage
	for _, x := range r.ModelUsage {
		m = m.Add(state.Usage{Input: x.Input, CacheWrite: x.CacheWrite, CacheRead: x.CacheRead, Output: x.Output})
	}
	return state.Usage{Input: max(u.Input, m.Input), CacheWrite: max(u.CacheWrite, m.CacheWrite),
		CacheRead: max(u.CacheRead, m.CacheRead), Output: max(u.Output, m.Output)}
}
