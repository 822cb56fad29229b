package codex

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
)

// maxLine bounds one JSONL line the watcher reads whole; a longer line
// (a huge command output) is passed on to the log and not parsed.
const maxLine = 4 << 20

// Usage is the token usage `codex exec --json` reports in turn.completed:
// the thread's running total since it began (across resumes), with
// OpenAI's meaning: InputTokens includes CachedInputTokens, and
// OutputTokens includes ReasoningOutputTokens.
type Usage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
}

// Raw is u in the CLI's own field names (agent.Outcome.RawUsage):
// input_tokens includes the cached ones, as OpenAI counts; nil for a run
// that used nothing.
func (u Usage) Raw() map[string]int64 {
	if u == (Usage{}) {
		return nil
	}
	return map[string]int64{
		"input_tokens":             u.InputTokens,
		"cached_input_tokens":      u.CachedInputTokens,
		"cache_write_input_tokens": u.CacheWriteInputTokens,
		"output_tokens":            u.OutputTokens,
		"reasoning_output_tokens":  u.ReasoningOutputTokens,
	}
}

// Sub returns u less an earlier total of the same thread (the usage of
// the runs since then); a field that went down counts 0.
func (u Usage) Sub(prev Usage) Usage {
	d := func(a, b int64) int64 { return max(a-b, 0) }
	return Usage{d(u.InputTokens, prev.InputTokens), d(u.CachedInputTokens, prev.CachedInputTokens),
		d(u.CacheWriteInputTokens, prev.CacheWriteInputTokens), d(u.OutputTokens, prev.OutputTokens),
		d(u.ReasoningOutputTokens, prev.ReasoningOutputTokens)}
}

// State converts u to cadence's usage: Input is the input tokens that
// were neither read from nor written to the cache, CacheRead the cached
// ones, CacheWrite the cache writes, Output the output (reasoning
// included). Counted() is then input excluding cache reads + cache writes
// + output, as for every vendor.
func (u Usage) State() state.Usage {
	return state.Usage{
		Input:      max(u.InputTokens-u.CachedInputTokens-u.CacheWriteInputTokens, 0),
		CacheRead:  u.CachedInputTokens,
		CacheWrite: u.CacheWriteInputTokens,
		Output:     u.OutputTokens,
	}
}

// event is one line of `codex exec --json`.
type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Usage    *Usage `json:"usage"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Item *item `json:"item"`
}

// item is an item.started or item.completed item.
type item struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Text             string `json:"text"`
	Message          string `json:"message"`
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	Status           string `json:"status"`
}

// Stream is what a run's JSONL stream said: the thread, the last agent
// message (the report, when the CLI was given --output-schema), the
// thread's usage total at its last turn.completed, the turn.failed error,
// the commands that ran.
type Stream struct {
	ThreadID string
	// Message is the text of the last agent_message item.
	Message string
	// Total is the last turn.completed usage (the thread's running total);
	// Turns counts the turn.completed lines.
	Total Usage
	Turns int
	// Failed is the message of turn.failed ("" when none); Errors the
	// messages of the error events and error items, in order.
	Failed string
	Errors []string
	// Commands are the command_execution items completed, in order.
	Commands []Command
}

// Command is a completed command_execution item.
type Command struct {
	Command, Output string
	ExitCode        int
}

// Parse reads a whole JSONL stream (a log file) and returns what it says;
// lines that are not events are skipped.
func Parse(r io.Reader) Stream {
	w := newWatch(nil)
	w.consume(r, nil)
	return w.result()
}

// watch follows a run's stdout as it comes, passing every byte on to a
// log writer and calling progress with each turn's total.
type watch struct {
	progress func(Usage)

	mu sync.Mutex
	st Stream
}

func newWatch(progress func(Usage)) *watch { return &watch{progress: progress} }

// consume reads r to its end, writes everything to out (nil: nowhere) and
// parses each line. Writes to out that fail are dropped: the files report
// their own errors.
func (w *watch) consume(r io.Reader, out io.Writer) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if len(chunk) > 0 || (err == nil && !isPrefix) {
			if out != nil {
				out.Write(chunk)
				if !isPrefix {
					out.Write([]byte{'\n'})
				}
			}
			if len(line)+len(chunk) <= maxLine {
				line = append(line, chunk...)
			} else {
				line = append(line[:0], 0) // too long: not parsed
			}
			if !isPrefix {
				w.line(line)
				line = line[:0]
			}
		}
		if err != nil {
			return
		}
	}
}

// line parses one line.
func (w *watch) line(b []byte) {
	var e event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil {
		return
	}
	w.mu.Lock()
	var total *Usage
	switch e.Type {
	case "thread.started":
		if w.st.ThreadID == "" {
			w.st.ThreadID = e.ThreadID
		}
	case "turn.completed":
		if e.Usage != nil {
			w.st.Total, w.st.Turns = *e.Usage, w.st.Turns+1
			u := *e.Usage
			total = &u
		}
	case "turn.failed":
		if e.Error != nil {
			w.st.Failed = e.Error.Message
		}
		if w.st.Failed == "" {
			w.st.Failed = "the turn failed"
		}
	case "error":
		w.st.Errors = append(w.st.Errors, e.Message)
	case "item.completed":
		if it := e.Item; it != nil {
			switch it.Type {
			case "agent_message":
				w.st.Message = it.Text
			case "error":
				w.st.Errors = append(w.st.Errors, it.Message)
			case "command_execution":
				c := Command{Command: it.Command, Output: it.AggregatedOutput}
				if it.ExitCode != nil {
					c.ExitCode = *it.ExitCode
				}
				w.st.Commands = append(w.st.Commands, c)
			}
		}
	}
	w.mu.Unlock()
	if total != nil && w.progress != nil {
		w.progress(*total)
	}
}

// result is what the stream said so far.
func (w *watch) result() Stream {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	st.Errors = append([]string(nil), st.Errors...)
	st.Commands = append([]Command(nil), st.Commands...)
	return st
}

// readOnlyRefusal is what a command that the read-only (or workspace
// write) sandbox kept from writing prints (bash, coreutils, git).
const readOnlyRefusal = "Read-only file system"

// denials are the commands of st that the sandbox kept from writing, as
// agent.Denials of the exec_command tool (the command as Codex ran it).
func (st Stream) denials() []agent.Denial {
	var out []agent.Denial
	for _, c := range st.Commands {
		if c.ExitCode != 0 && strings.Contains(c.Output, readOnlyRefusal) {
			out = append(out, agent.Denial{Tool: "exec_command", Input: c.Command, Sandbox: true})
		}
	}
	return out
}

// pushAttempts are the commands of st that ran git push (the guards made
// them fail).
func (st Stream) pushAttempts() []string {
	var out []string
	for _, c := range st.Commands {
		if strings.Contains(c.Command, "git push") || strings.Contains(c.Command, "git -c") && strings.Contains(c.Command, " push") {
			out = append(out, c.Command)
		}
	}
	return out
}
