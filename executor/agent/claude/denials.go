package claude

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
)

// A tool call the CLI refuses is no error for the CLI (the session goes
// on, the model gets a tool_result with is_error true), so cadence reads
// the refusals from the stream (2.1.328, observed with the real CLI in
// cmd/cadence/e2e_reports_test.go):
//
//   - a call of a tool a whole-tool deny rule took away (a read-only
//     session's Edit or Write, readonly.go) is answered
//     "<tool_use_error>Error: No such tool available: Edit. Edit is
//     disabled for this session, in subagents as well as here.</tool_use_error>"
//     and is NOT in the result's permission_denials;
//   - a call a permission rule refuses (`Bash(git commit:*)`) is answered
//     "Permission to use Bash with command git commit -m x has been
//     denied." and is in the result's permission_denials
//     ({"tool_name","tool_use_id","tool_input"}).
//
//   - a write the OS sandbox refused (sandbox.go) is no refusal of the
//     CLI: the command ran and failed, and its tool_result (is_error true)
//     holds the kernel's "Read-only file system" (EROFS on the sandbox's
//     read-only binds), as the shell, git or python print it. It is
//     recorded as a denial by the sandbox.
//
// All are recorded once per tool_use id, with the call's tool and its
// command or file path (streamWatch.denials).

// refusalRE matches the tool_result text of a refused call.
var refusalRE = regexp.MustCompile(`No such tool available: |^Permission to use \S+ .*has been denied|^Error: Permission to use `)

// sandboxRefusal reports whether a failed tool call's result text says
// the sandbox kept it from writing (EROFS).
func sandboxRefusal(text string) bool {
	return strings.Contains(text, "Read-only file system")
}

// refusal reports whether a failed tool call's result text says the CLI
// refused the call (not that the tool ran and failed).
func refusal(text string) bool {
	return refusalRE.MatchString(strings.TrimPrefix(strings.TrimSpace(text), "<tool_use_error>"))
}

// resultText is the text of a tool_result's content: a string, or the
// text blocks of a list, joined by newlines.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// toolInput is what identifies a tool call's input for a person: its
// command (Bash), file or notebook path (Edit, Write, MultiEdit,
// NotebookEdit), else "".
func toolInput(raw json.RawMessage) string {
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	_ = json.Unmarshal(raw, &in)
	for _, s := range []string{in.Command, in.FilePath, in.NotebookPath} {
		if s != "" {
			return s
		}
	}
	return ""
}

// denied records the refused call id (d its tool and input, as far as
// known), once. w.mu is held.
func (w *streamWatch) denied(id string, d agent.Denial) {
	if id != "" && w.deniedID[id] {
		return
	}
	if d.Tool == "" {
		d = w.calls[id]
	}
	if d.Tool == "" {
		d.Tool = "a tool"
	}
	if id != "" {
		w.deniedID[id] = true
	}
	w.denials = append(w.denials, d)
}

// deniedCalls are the session's tool calls the CLI refused, in order.
func (w *streamWatch) deniedCalls() []agent.Denial {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]agent.Denial(nil), w.denials...)
}
