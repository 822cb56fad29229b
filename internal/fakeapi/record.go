package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Answer says what kind of answer a request got.
type Answer string

// The kinds of answer.
const (
	// AnswerTurn: a turn of the request's script (Request.Turn says which).
	AnswerTurn Answer = "turn"
	// AnswerDone: the session had played its whole script; the request got
	// the final text "done".
	AnswerDone Answer = "done"
	// AnswerSide: a tool-less non-streaming request got the side answer.
	AnswerSide Answer = "side"
	// AnswerNoScript: no script matched the marker; the request got a 400
	// invalid_request_error.
	AnswerNoScript Answer = "no-script"
	// AnswerNotFound: not POST /v1/messages; the request got a 404.
	AnswerNotFound Answer = "not-found"
)

// Request is one recorded request and how it was answered.
type Request struct {
	// Time is when the request arrived.
	Time time.Time
	// Duration is how long the answer took (delays and hangs included);
	// zero while it is still being answered.
	Duration time.Duration
	// Method and Path are the HTTP method and URL path (without query).
	Method, Path string
	// SessionID is the X-Claude-Code-Session-Id header.
	SessionID string
	// Header holds all request headers.
	Header http.Header
	// Model and Stream are the "model" and "stream" fields of the body.
	Model  string
	Stream bool
	// Body is the raw request body.
	Body []byte
	// Marker is the NAME of the first [[fake:NAME]] in the body, or "".
	Marker string
	// Answer is the kind of answer given.
	Answer Answer
	// Turn is the index in the script of the turn played, or -1 when the
	// answer was not a script turn.
	Turn int
	// Status is the HTTP status sent, or 0 when no response was sent (a
	// drop, a hang, a client gone during a delay, or still answering).
	Status int
}

// Contains reports whether the raw body contains s. Text inside JSON
// strings is escaped there (quotes as \", newlines as \n).
func (r Request) Contains(s string) bool {
	return bytes.Contains(r.Body, []byte(s))
}

// ToolResult is a tool_result block sent back by the client.
type ToolResult struct {
	// ToolUseID is the id of the tool_use it answers.
	ToolUseID string
	// IsError is the block's is_error flag.
	IsError bool
	// Text is the result text; text parts of a list content are joined by
	// newlines.
	Text string
	// Images is the number of image blocks of a list content (a browser's
	// screenshot reaches the model as one).
	Images int
}

// ToolResults returns the tool_result blocks of every message in the
// request body, in order. A malformed body gives none.
func (r Request) ToolResults() []ToolResult {
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(r.Body, &body) != nil {
		return nil
	}
	var out []ToolResult
	for _, m := range body.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string content
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Text: contentText(b.Content), Images: contentImages(b.Content)})
			}
		}
	}
	return out
}

// contentText is the text of a content field: a string, or a list of
// blocks whose text parts are joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// contentImages is the number of image blocks of a list content.
func contentImages(raw json.RawMessage) int {
	var parts []struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &parts)
	n := 0
	for _, p := range parts {
		if p.Type == "image" {
			n++
		}
	}
	return n
}

// ToolNames returns the names of the tools the request offers.
func (r Request) ToolNames() []string {
	var body struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(r.Body, &body)
	var names []string
	for _, t := range body.Tools {
		names = append(names, t.Name)
	}
	return names
}
