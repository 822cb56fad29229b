package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"
)

// message is an assistant message about to be sent.
type message struct {
	ID         string
	Model      string
	Blocks     []Block // tool_use ids filled in
	StopReason string
	Usage      Usage
}

// message builds the message that t answers, with fresh ids and PromptURL
// replaced by url.
func (s *Server) message(t Turn, model, url string) message {
	m := message{ID: s.newID("msg_fake"), Model: model, StopReason: t.StopReason, Usage: DefaultUsage}
	if model == "" {
		m.Model = "claude-fake"
	}
	if t.Usage != nil {
		m.Usage = *t.Usage
	}
	hasTool := false
	for _, b := range t.Blocks {
		if b.Type == "tool_use" {
			hasTool = true
			if b.ID == "" {
				b.ID = s.newID("toolu_fake")
			}
			if len(b.Input) == 0 {
				b.Input = json.RawMessage("{}")
			}
			b.Input = withPromptURL(b.Input, url)
		}
		m.Blocks = append(m.Blocks, b)
	}
	if len(m.Blocks) == 0 {
		m.Blocks = []Block{TextBlock("")}
	}
	if m.StopReason == "" {
		m.StopReason = "end_turn"
		if hasTool {
			m.StopReason = "tool_use"
		}
	}
	return m
}

// blockJSON is b as a complete content block.
func blockJSON(b Block) map[string]any {
	if b.Type == "tool_use" {
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": b.Input}
	}
	return map[string]any{"type": b.Type, "text": b.Text}
}

// json is m as a complete (non-streaming) Messages API response.
func (m message) json() []byte {
	content := make([]map[string]any, len(m.Blocks))
	for i, b := range m.Blocks {
		content[i] = blockJSON(b)
	}
	out, _ := json.Marshal(map[string]any{
		"id":            m.ID,
		"type":          "message",
		"role":          "assistant",
		"model":         m.Model,
		"content":       content,
		"stop_reason":   m.StopReason,
		"stop_sequence": nil,
		"usage":         m.Usage,
	})
	return out
}

// writeStart sends m's message_start event: its id, model and usage with
// at most 1 output token, as the API does before any content.
func writeStart(w http.ResponseWriter, m message) {
	startUsage := m.Usage
	startUsage.OutputTokens = min(1, m.Usage.OutputTokens)
	b, _ := json.Marshal(map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": m.ID, "type": "message", "role": "assistant", "model": m.Model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": startUsage,
		},
	})
	fmt.Fprintf(w, "event: message_start\ndata: %s\n\n", b)
	http.NewResponseController(w).Flush()
}

// writeSSE streams m as Server-Sent Events, flushing after each event.
// When streamErr is set, an "error" event follows message_start instead of
// the content.
func writeSSE(w http.ResponseWriter, m message, streamErr *APIError) {
	rc := http.NewResponseController(w)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		rc.Flush()
	}
	writeStart(w, m)
	if streamErr != nil {
		w.Write([]byte("event: error\ndata: "))
		w.Write(streamErr.body())
		io.WriteString(w, "\n\n")
		rc.Flush()
		return
	}
	for i, b := range m.Blocks {
		start := blockJSON(b)
		var deltas []map[string]any
		if b.Type == "tool_use" {
			start["input"] = map[string]any{}
			for _, part := range chunks(string(b.Input), 48) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": part})
			}
		} else {
			start["text"] = ""
			for _, part := range chunks(b.Text, 48) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": part})
			}
		}
		event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		for _, d := range deltas {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": m.StopReason, "stop_sequence": nil},
		"usage": m.Usage,
	})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// chunks splits s into pieces of at most n bytes, on UTF-8 boundaries. The
// empty string gives no pieces.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		if end == 0 {
			_, end = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
