package claude

import (
	"bufio"
	"encoding/json"
	"io"
	"regexp"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/state"
)

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
	// system/api_retry
	Attempt     int    `json:"attempt"`
	MaxRetries  int    `json:"max_retries"`
	RetryDelay  int    `json:"retry_delay_ms"`
	ErrorStatus int    `json:"error_status"`
	Error       string `json:"error"`
	// rate_limit_event (quota.go)
	RateLimit *rateLimitInfo `json:"rate_limit_info"`
}

type blockJSON struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
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
// usage of every model turn (each turn's usage counted once, though the CLI
// repeats it on every content block of the turn), reports progress, and
// remembers the last result line.
type streamWatch struct {
	mu      sync.Mutex
	turns   map[string]state.Usage
	order   []string
	result  []byte
	retries int
	lastErr string
	// resetAt is the reset time of the last rejected rate_limit_event.
	resetAt *time.Time
	// pushes are Bash commands of the session that try to push.
	pushes   []string
	progress func(state.Usage)
	notes    func(string)
}

func newStreamWatch(progress func(state.Usage), notes func(string)) *streamWatch {
	return &streamWatch{turns: map[string]state.Usage{}, progress: progress, notes: notes}
}

// consume reads r to its end.
func (w *streamWatch) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		w.line(sc.Bytes())
	}
}

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
	case l.Type == "assistant" && l.Message != nil && l.Message.Usage != nil && l.Message.Model != "<synthetic>":
		id := l.Message.ID
		if _, seen := w.turns[id]; !seen {
			w.order = append(w.order, id)
		}
		w.turns[id] = l.Message.Usage.usage()
		if w.progress != nil {
			w.progress(w.totalLocked())
		}
		for _, c := range l.Message.Content {
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
	return w.totalLocked()
}

func (w *streamWatch) totalLocked() state.Usage {
	var u state.Usage
	for _, id := range w.order {
		u = u.Add(w.turns[id])
	}
	return u
}

// lastResult is the last result line, or nil.
func (w *streamWatch) lastResult() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.result
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
