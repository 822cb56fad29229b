package openai

import (
	"encoding/json"
	"strconv"
	"time"
)

// Script is a list of turns the server plays in order, one per request,
// separately for each thread.
type Script []Turn

// Turn is one scripted answer: output items, an HTTP error, an in-stream
// response.failed, or a hang.
type Turn struct {
	// Items are the response's output items.
	Items []Item
	// Usage is reported in response.completed; nil: DefaultUsage.
	Usage *Usage
	// Header holds extra response headers (retry-after).
	Header map[string]string
	// Error answers with an HTTP error instead of a stream.
	Error *APIError
	// Failed answers response.created then response.failed with it.
	Failed *Failure
	// Hang holds the request open until the client goes away.
	Hang bool
	// Repeat keeps the thread's play position on this turn.
	Repeat bool
}

// Item is one output item: a function call (Call, Args) or an assistant
// message (Text).
type Item struct {
	Text string
	Call string
	Args any
}

// Usage is a turn's usage in the API's meaning: Input includes Cached,
// Output includes Reasoning.
type Usage struct {
	Input, Cached, Output, Reasoning int64
}

// DefaultUsage is the usage of a turn that sets none.
var DefaultUsage = Usage{Input: 1000, Cached: 400, Output: 50, Reasoning: 10}

// APIError is an HTTP error answer {"error": Body}.
type APIError struct {
	Status int
	Body   map[string]any
}

// Failure is the error of a response.failed event.
type Failure struct {
	Code, Message string
}

// Message is a turn that answers one assistant message.
func Message(text string) Turn { return Turn{Items: []Item{{Text: text}}} }

// Report is a turn whose message is v as JSON (the structured report).
func Report(v any) Turn {
	b, _ := json.Marshal(v)
	return Message(string(b))
}

// Exec is a turn that runs cmd with Codex's shell tool (exec_command,
// 0.171.0).
func Exec(cmd string) Turn {
	return Turn{Items: []Item{{Call: "exec_command", Args: map[string]any{"cmd": cmd}}}}
}

// HTTPError is a turn answering status with an error of type typ.
func HTTPError(status int, typ, message string) Turn {
	return Turn{Error: &APIError{Status: status, Body: map[string]any{"type": typ, "code": typ, "message": message}}}
}

// RateLimited is a 429 rate_limit_exceeded with retry-after seconds.
func RateLimited(retryAfter int) Turn {
	t := HTTPError(429, "rate_limit_exceeded", "Rate limit reached for requests")
	t.Header = map[string]string{"retry-after": strconv.Itoa(retryAfter)}
	return t
}

// UsageLimit is the 429 usage_limit_reached a ChatGPT plan answers, with
// its reset time.
func UsageLimit(resetsAt time.Time) Turn {
	return Turn{Error: &APIError{Status: 429, Body: map[string]any{"type": "usage_limit_reached",
		"message": "The usage limit has been reached", "plan_type": "plus",
		"resets_at": resetsAt.Unix(), "resets_in_seconds": int64(time.Until(resetsAt).Seconds())}}}
}

// Overloaded is an in-stream response.failed server_is_overloaded.
func Overloaded() Turn {
	return Turn{Failed: &Failure{Code: "server_is_overloaded", Message: "The server is overloaded"}}
}

// Hang is a turn that never answers.
func Hang() Turn { return Turn{Hang: true} }

// WithUsage returns t reporting u.
func (t Turn) WithUsage(u Usage) Turn {
	t.Usage = &u
	return t
}

// Forever returns t answering every later request of the thread.
func (t Turn) Forever() Turn {
	t.Repeat = true
	return t
}
