package claude

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// apiResult is a result line of the real CLI 2.1.328 ending on an API
// error (`claude -p … --output-format stream-json --verbose` with
// CLAUDE_CODE_MAX_RETRIES=0 against internal/fakeapi; shared/reference/
// claude-cli.md §5), with the fields cadence reads: status is the JSON of
// api_error_status, extra more fields ("" for none).
func apiResult(status, errType, text, extra string) string {
	s := `{"type":"result","subtype":"success","is_error":true,"num_turns":1,"terminal_reason":"api_error","api_error_status":` + status
	if errType != "" {
		s += `,"api_error_type":"` + errType + `"`
	}
	return s + extra + `,"result":"` + text + `","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{}}`
}

func TestClassifyAPIFailure(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		want         agent.APIFailure
		status       state.StepStatus
	}{
		{"529", apiResult("529", "overloaded_error", "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:41589).", ""), agent.APIOverloaded, state.StepFailed},
		{"in-stream overloaded", apiResult("529", "overloaded_error", "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.", ""), agent.APIOverloaded, state.StepFailed},
		{"500", apiResult("500", "api_error", "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment.", ""), agent.APIOverloaded, state.StepFailed},
		{"503", apiResult("503", "api_error", "API Error: 503 Service unavailable. This is a server-side issue, usually temporary — try again in a moment.", ""), agent.APIOverloaded, state.StepFailed},
		{"connection dropped", apiResult("null", "", "API Error: Connection dropped (ECONNRESET). Check the gateway set in ANTHROPIC_BASE_URL, then try again.", `,"api_error":"connection_failed"`), agent.APINetwork, state.StepFailed},
		{"connection refused", apiResult("null", "", "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)", `,"api_error":"connection_failed"`), agent.APIUnreachable, state.StepFailed},
		{"unknown host", apiResult("null", "", "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)", `,"api_error":"connection_failed"`), agent.APIUnreachable, state.StepFailed},
		{"401", apiResult("401", "authentication_error", "Invalid API key · Fix external API key", ""), agent.APIAuth, state.StepFailed},
		{"403", apiResult("403", "permission_error", "Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource.", ""), agent.APIAuth, state.StepFailed},
		{"credit", apiResult("400", "invalid_request_error", "Credit balance is too low", ""), agent.APICredit, state.StepFailed},
		{"billing", apiResult("400", "invalid_request_error", "API Error: 400 This organization has been disabled for billing reasons.", ""), agent.APICredit, state.StepFailed},
		// Not API failures of a class: the session's own fault, or a limit.
		{"prompt too long", `{"type":"result","subtype":"success","is_error":true,"terminal_reason":"prompt_too_long","api_error_status":400,"result":"Prompt is too long","usage":{"input_tokens":0,"output_tokens":0}}`, agent.APINone, state.StepFailed},
		{"429", api429, agent.APINone, state.StepQuota},
		{"max turns", maxTurns, agent.APINone, state.StepFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Classify(Ended{Result: []byte(tc.result), Proc: proc.Result{ExitCode: 1}, Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()})
			if o.API != tc.want || o.Status != tc.status {
				t.Errorf("got %s %q (%s), want class %q, %s", o.Status, o.API, o.Cause, tc.want, tc.status)
			}
			if tc.want != agent.APINone && o.Cause == "" {
				t.Error("no cause")
			}
		})
	}
	// An interrupted session stays interrupted, whatever its result says.
	o := Classify(Ended{Cancelled: true, Result: []byte(apiResult("401", "authentication_error", "Invalid API key", ""))})
	if o.Status != state.StepInterrupted || o.API != agent.APINone {
		t.Errorf("cancelled: %s %q", o.Status, o.API)
	}
}

// schemaGaveUpReal is the result line of the real CLI 2.1.328 after five
// reports that failed the schema (5 turns of 100 in, 20 out): its usage
// leaves out the last turn, its modelUsage has them all.
const schemaGaveUpReal = `{"type":"result","subtype":"error_max_structured_output_retries","is_error":true,"num_turns":6,"terminal_reason":"structured_output_retry_exhausted","total_cost_usd":0.004,` +
	`"usage":{"input_tokens":400,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":80},` +
	`"modelUsage":{"claude-opus-5-5":{"inputTokens":500,"outputTokens":100,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.004}}}`

func TestClassifyCountsEveryTurn(t *testing.T) {
	o := Classify(Ended{Result: []byte(schemaGaveUpReal), Proc: proc.Result{ExitCode: 1}, Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()})
	if o.Usage != (state.Usage{Input: 500, Output: 100}) || o.CostMicros != 4000 {
		t.Errorf("usage %+v cost %d, want 500 in, 100 out, 4000 µ$", o.Usage, o.CostMicros)
	}
	if !strings.Contains(o.Cause, "gave up on the structured report") {
		t.Errorf("cause %q", o.Cause)
	}
}

// TestSessionUsageTakesTheStream: a result whose usage and modelUsage both
// miss a turn the stream saw counts the stream's turns.
func TestSessionUsageTakesTheStream(t *testing.T) {
	w := newStreamWatch(nil, nil)
	var lines []string
	for _, id := range []string{"m1", "m2", "m3"} {
		lines = append(lines, `{"type":"assistant","message":{"id":"`+id+`","model":"claude-opus-5-5","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20}}}`)
	}
	lines = append(lines, `{"type":"result","subtype":"error_max_structured_output_retries","is_error":true,"usage":{"input_tokens":200,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":40}}`)
	w.consume(strings.NewReader(strings.Join(lines, "\n")), nil)
	o := Classify(Ended{Result: w.lastResult(), Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()})
	if got := sessionUsage(o.Usage, w.seen()); got != (state.Usage{Input: 300, Output: 60}) {
		t.Errorf("usage %+v, want 300 in, 60 out", got)
	}
}

// TestArgsFallbackModel: the session's fallback model is passed on, but
// not when it is the session's model (the CLI refuses that: "Fallback
// model cannot be the same as the main model").
func TestArgsFallbackModel(t *testing.T) {
	a := &spec.Agent{Name: "claude", Kind: "claude", Command: "claude"}
	for _, tc := range []struct{ model, fallback, want string }{
		{"opus", "sonnet", "--fallback-model sonnet"},
		{"sonnet", "sonnet", ""},
		{"opus", "", ""},
	} {
		args, err := Args(agent.Session{Agent: a, Model: tc.model, FallbackModel: tc.fallback, SessionID: "id", Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(args, " ")
		if has := strings.Contains(got, "--fallback-model"); has != (tc.want != "") || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("model %s fallback %q: %s", tc.model, tc.fallback, got)
		}
	}
}
