package fakeapi

import (
	"encoding/json"
	"fmt"
	"time"
)

// Script is a list of turns that the server plays in order, one turn per
// request, separately for each session (see the package documentation).
type Script []Turn

// Turn is one scripted answer to a request: a model message (Blocks), or an
// HTTP error, a dropped connection or a hang, optionally after a delay.
type Turn struct {
	// Blocks are the content blocks of the assistant message. A turn with
	// no blocks (and no Error, Drop or Hang) answers an empty text block.
	Blocks []Block
	// StopReason overrides the stop reason. By default it is "tool_use"
	// when a block is a tool_use, else "end_turn".
	StopReason string
	// Usage is reported in message_start and message_delta; nil means
	// DefaultUsage.
	Usage *Usage
	// Header holds extra response headers, such as retry-after,
	// x-should-retry or anthropic-ratelimit-unified-status. They are sent
	// with errors and with messages alike.
	Header map[string]string
	// Delay is a wait before the response headers. A client that goes away
	// during the wait gets nothing.
	Delay time.Duration
	// Error, when set, answers with that HTTP error instead of a message.
	Error *APIError
	// StreamError, when set on a streamed turn, sends message_start and
	// then an SSE "error" event in place of the content (an in-stream
	// failure such as overloaded_error). Non-streaming requests get Error
	// semantics instead: the HTTP status and body of StreamError.
	StreamError *APIError
	// Drop closes the connection (with a TCP reset) without any response.
	Drop bool
	// Hang sends nothing and holds the request open until the client goes
	// away or the server is closed.
	Hang bool
	// Stall, on a streamed turn, sends message_start (the turn's input
	// tokens, as the API reports them before any content) and then holds
	// the stream open like Hang: a turn in flight.
	Stall bool
	// Repeat keeps the session's play position on this turn, so that it
	// answers every later request of the session too (for example a 429
	// that never ends).
	Repeat bool
}

// Block is one content block of an assistant message.
type Block struct {
	// Type is "text" or "tool_use".
	Type string
	// Text is the text of a text block.
	Text string
	// Name is the tool name of a tool_use block.
	Name string
	// ID is the tool_use id. When empty, the server makes a fresh one for
	// every response, so ids stay unique even when a turn repeats.
	ID string
	// Input is the tool input, a JSON object ("{}" when empty).
	Input json.RawMessage
}

// Usage holds the token counts a turn reports.
type Usage struct {
	// InputTokens, OutputTokens, CacheCreationInputTokens and
	// CacheReadInputTokens are the API's usage fields of the same names.
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// DefaultUsage is the usage of a turn that sets none: 100 tokens in, 20 out.
var DefaultUsage = Usage{InputTokens: 100, OutputTokens: 20}

// APIError is an error answer in the Anthropic shape
// {"type":"error","error":{"type":Type,"message":Message}}.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Type is the error type, such as "rate_limit_error"; empty means the
	// usual type for Status.
	Type string
	// Message is the error message; empty means a generic one.
	Message string
}

// Text is a turn that answers with a single text block.
func Text(s string) Turn {
	return Turn{Blocks: []Block{TextBlock(s)}}
}

// ToolUse is a turn that calls one tool with input, which is marshalled to
// JSON (a json.RawMessage is used as is). It panics when input cannot be
// marshalled.
func ToolUse(name string, input any) Turn {
	return Turn{Blocks: []Block{ToolBlock(name, input)}}
}

// Bash is a turn that runs cmd with the Bash tool.
func Bash(cmd string) Turn {
	return ToolUse("Bash", map[string]string{"command": cmd, "description": "Run a command"})
}

// Write is a turn that writes content to path with the Write tool. The CLI
// expects an absolute path.
func Write(path, content string) Turn {
	return ToolUse("Write", map[string]string{"file_path": path, "content": content})
}

// StructuredOutput is a turn that calls the StructuredOutput tool (offered
// by the CLI when --json-schema is given) with v as the output.
func StructuredOutput(v any) Turn {
	return ToolUse("StructuredOutput", v)
}

// Blocks is a turn with several content blocks, such as a text and two
// tool calls.
func Blocks(blocks ...Block) Turn {
	return Turn{Blocks: blocks}
}

// TextBlock is a text content block.
func TextBlock(s string) Block {
	return Block{Type: "text", Text: s}
}

// ToolBlock is a tool_use content block; input is marshalled as in ToolUse.
func ToolBlock(name string, input any) Block {
	raw, ok := input.(json.RawMessage)
	if !ok {
		var err error
		raw, err = json.Marshal(input)
		if err != nil {
			panic(fmt.Sprintf("fakeapi: tool input for %s: %v", name, err))
		}
	}
	return Block{Type: "tool_use", Name: name, Input: raw}
}

// HTTPError is a turn that answers with an HTTP error. Empty errType and
// message get the usual ones for status.
func HTTPError(status int, errType, message string) Turn {
	return Turn{Error: &APIError{Status: status, Type: errType, Message: message}}
}

// RateLimited is a 429 rate_limit_error turn, with a retry-after header
// (in seconds) unless retryAfter is empty.
func RateLimited(retryAfter string) Turn {
	t := HTTPError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
	if retryAfter != "" {
		t = t.WithHeader("retry-after", retryAfter)
	}
	return t
}

// Overloaded is a 529 overloaded_error turn.
func Overloaded() Turn {
	return HTTPError(529, "overloaded_error", "Overloaded")
}

// Drop is a turn that closes the connection without an answer.
func Drop() Turn { return Turn{Drop: true} }

// Hang is a turn that never answers; it ends when the client goes away.
func Hang() Turn { return Turn{Hang: true} }

// Stall is a turn that starts its answer (message_start with its usage)
// and never goes on; it ends when the client goes away.
func Stall() Turn { return Turn{Stall: true} }

// WithUsage returns t reporting u.
func (t Turn) WithUsage(u Usage) Turn {
	t.Usage = &u
	return t
}

// WithDelay returns t answering after d.
func (t Turn) WithDelay(d time.Duration) Turn {
	t.Delay = d
	return t
}

// WithHeader returns t with one more response header.
func (t Turn) WithHeader(key, value string) Turn {
	h := make(map[string]string, len(t.Header)+1)
	for k, v := range t.Header {
		h[k] = v
	}
	h[key] = value
	t.Header = h
	return t
}

// Forever returns t with Repeat set: it answers every later request of the
// session.
func (t Turn) Forever() Turn {
	t.Repeat = true
	return t
}

// errorType is the usual Anthropic error type for an HTTP status.
func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

// body is the JSON error body of e.
func (e APIError) body() []byte {
	typ, msg := e.Type, e.Message
	if typ == "" {
		typ = errorType(e.Status)
	}
	if msg == "" {
		msg = fmt.Sprintf("fakeapi: scripted %d %s", e.Status, typ)
	}
	b, _ := json.Marshal(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": msg},
	})
	return b
}
