package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
)

// turnJSON is what cadence reads of a model turn's message, wherever the
// CLI writes it (a stream event's message_start, a transcript's assistant
// line): its id, model and usage.
type turnJSON struct {
	ID    string     `json:"id"`
	Model string     `json:"model"`
	Usage *usageJSON `json:"usage"`
}

// streamLine is the part of a stream-json line cadence reads.
type streamLine struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message *struct {
		ID      string      `json:"id"`
		Model   string      `json:"model"`
		Usage   *usageJSON  `json:"usage"`
		Content []blockJSON `json:"content"`
	} `json:"message"`
	// stream_event (--include-partial-messages): the API's own events,
	// message_start with the turn's input tokens as soon as it begins.
	Event *struct {
		Type    string     `json:"type"`
		Message *turnJSON  `json:"message"`
		Usage   *usageJSON `json:"usage"`
	} `json:"event"`
	APIMessageID string `json:"api_message_id"`
	// system/api_retry
	Attempt     int    `json:"attempt"`
	MaxRetries  int    `json:"max_retries"`
	RetryDelay  int    `json:"retry_delay_ms"`
	ErrorStatus int    `json:"error_status"`
	Error       string `json:"error"`
	// result
	PermissionDenials []struct {
		ToolName  string          `json:"tool_name"`
		ToolUseID string          `json:"tool_use_id"`
		ToolInput json.RawMessage `json:"tool_input"`
	} `json:"permission_denials"`
	// rate_limit_event (quota.go)
	RateLimit *rateLimitInfo `json:"rate_limit_info"`
	// system/init: the MCP servers and their status (browser.go)
	MCPServers []mcpServerJSON `json:"mcp_servers"`
}

type blockJSON struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result blocks (in user lines)
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

type usageJSON struct {
	Input      int64 `json:"input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	Output     int64 `json:"output_tokens"`
}

func (u *usageJSON) usage() state.Usage {
	if u == nil {
		return state.Usage{}
	}
	return state.Usage{Input: u.Input, CacheWrite: u.CacheWrite, CacheRead: u.CacheRead, Output: u.Output}
}

// streamWatch reads the CLI's stream-json output as it comes: it keeps the
// usage of every model turn (turns: each turn counted once, though the CLI
// repeats it on every content block of the turn and in its stream events),
// reports progress, and remembers the last result line.
type streamWatch struct {
	mu      sync.Mutex
	turns   *turns
	result  []byte
	retries int
	lastErr string
	// resetAt is the reset time of the last rejected rate_limit_event.
	resetAt *time.Time
	// pushes are Bash commands of the session that try to push.
	pushes []string
	// calls are the session's tool calls by tool_use id; denials the
	// calls the CLI refused (denials.go).
	calls    map[string]agent.Denial
	denials  []agent.Denial
	deniedID map[string]bool
	progress func(state.Usage)
	notes    func(string)
	// browser is what the stream says of the session's browser.
	browser browserWatch
}

func newStreamWatch(progress func(state.Usage), notes func(string)) *streamWatch {
	return &streamWatch{turns: newTurns(), progress: progress, notes: notes,
		calls: map[string]agent.Denial{}, deniedID: map[string]bool{}}
}

// consume reads r to its end. Each line goes to log (nil: none) too, but
// the stream events of content deltas (one per few tokens, and the
// content is in the assistant lines already).
func (w *streamWatch) consume(r io.Reader, log io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		b := sc.Bytes()
		if bytes.HasPrefix(b, streamEvent) && bytes.Contains(b, contentDelta) {
			continue // no usage in it
		}
		if log != nil {
			log.Write(b)
			log.Write(newline)
		}
		w.line(b)
	}
	if log == nil {
		log = io.Discard
	}
	_, _ = io.Copy(log, r) // after a line too long to scan
}

var newline = []byte("\n")

var (
	streamEvent  = []byte(`{"type":"stream_event"`)
	contentDelta = []byte(`"type":"content_block_delta"`)
)

func (w *streamWatch) line(b []byte) {
	var l streamLine
	if json.Unmarshal(b, &l) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case l.Type == "result":
		w.result = append([]byte(nil), b...)
		for _, d := range l.PermissionDenials {
			w.denied(d.ToolUseID, agent.Denial{Tool: d.ToolName, Input: toolInput(d.ToolInput)})
		}
	case l.Type == "user" && l.Message != nil:
		for _, c := range l.Message.Content {
			// Only an image a browser tool returned is a screenshot: one
			// the Read tool returned (a PNG file) is none.
			if c.Type == "tool_result" && hasImage(c.Content) && strings.HasPrefix(w.calls[c.ToolUseID].Tool, mcpTool("")) {
				w.browser.screenshots++
			}
			if c.Type != "tool_result" || !c.IsError {
				continue
			}
			if w.browser.firstErr == "" && strings.HasPrefix(w.calls[c.ToolUseID].Tool, mcpTool("")) {
				w.browser.firstErr = firstLineCut(resultText(c.Content))
			}
			switch text := resultText(c.Content); {
			case refusal(text):
				w.denied(c.ToolUseID, w.calls[c.ToolUseID])
			case sandboxRefusal(text):
				d := w.calls[c.ToolUseID]
				d.Sandbox = true
				w.denied(c.ToolUseID, d)
			}
		}
	case l.Type == "stream_event" && l.Event != nil:
		switch e := l.Event; {
		case e.Type == "message_start" && e.Message != nil && e.Message.Usage != nil && e.Message.Model != "<synthetic>":
			w.turns.see(e.Message.ID, e.Message.Model, e.Message.Usage.usage())
		case e.Type == "message_delta" && e.Usage != nil && l.APIMessageID != "":
			if _, seen := w.turns.byID[l.APIMessageID]; !seen {
				return // a turn whose start was not counted (a synthetic one)
			}
			w.turns.see(l.APIMessageID, "", e.Usage.usage())
		default:
			return
		}
		if w.progress != nil {
			w.progress(w.turns.total())
		}
	case l.Type == "assistant" && l.Message != nil && l.Message.Usage != nil && l.Message.Model != "<synthetic>":
		w.turns.see(l.Message.ID, l.Message.Model, l.Message.Usage.usage())
		if w.progress != nil {
			w.progress(w.turns.total())
		}
		for _, c := range l.Message.Content {
			if c.Type == "tool_use" && c.ID != "" {
				w.calls[c.ID] = agent.Denial{Tool: c.Name, Input: toolInput(c.Input)}
			}
			if c.Type == "tool_use" && w.notes != nil && c.Name != "StructuredOutput" {
				w.notes("tool " + c.Name)
			}
			if c.Type == "tool_use" && c.Name == "Bash" {
				var in struct {
					Command string `json:"command"`
				}
				if json.Unmarshal(c.Input, &in) == nil && pushRE.MatchString(in.Command) {
					w.pushes = append(w.pushes, in.Command)
				}
			}
		}
	case l.Type == "rate_limit_event":
		if t := l.RateLimit.rejectedUntil(); t != nil {
			w.resetAt = t
		}
	case l.Type == "system" && l.Subtype == "init":
		for _, m := range l.MCPServers {
			if m.Name == browserServer {
				w.browser.status = m.Status
			}
		}
	case l.Type == "system" && l.Subtype == "api_retry":
		w.retries++
		w.lastErr = l.Error
		if w.notes != nil {
			w.notes("API retry " + itoa(l.Attempt) + "/" + itoa(l.MaxRetries) + " after " + l.Error)
		}
	}
}

// total is the usage of every model turn seen so far.
func (w *streamWatch) total() state.Usage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.turns.total()
}

// seen is a copy of the model turns seen so far.
func (w *streamWatch) seen() *turns {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := newTurns()
	t.merge(w.turns)
	return t
}

// lastResult is the last result line, or nil.
func (w *streamWatch) lastResult() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.result
}

// browserEvidence is what the stream said of the session's browser.
func (w *streamWatch) browserEvidence() *agent.BrowserEvidence {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.browser.evidence()
}

// rateLimitReset is the reset time of the last rejected rate_limit_event,
// or nil.
func (w *streamWatch) rateLimitReset() *time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resetAt
}

// pushRE spots a git push in a shell command, however it is dressed
// (git -C . push, bash -c 'git push', env git push).
var pushRE = regexp.MustCompile(`\bgit\b[^;&|\n]*\bpush\b`)

// pushAttempts are the session's Bash commands that try to push.
func (w *streamWatch) pushAttempts() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.pushes...)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
