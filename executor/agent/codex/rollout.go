package codex

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Home is the Codex CLI's own folder in environment env: $CODEX_HOME,
// else $HOME/.codex ("" when neither is set).
func Home(env []string) string {
	if h := envValue(env, "CODEX_HOME"); h != "" {
		return h
	}
	if h := envValue(env, "HOME"); h != "" {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// RolloutPath is the rollout file of thread id under home:
// sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl ("" when there is none or
// id is not a thread id).
func RolloutPath(home, id string) string {
	if home == "" || id == "" || strings.ContainsAny(id, "/*?[\\") {
		return ""
	}
	m, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

// Rollout is what cadence reads from a rollout file: the thread's last
// usage total (0.171.0 writes a token_usage_record line per response, its
// thread_token_usage the thread's running total; an event_msg token_count's
// info.total_token_usage is read too), and the codex_error_info and
// message of the last error it recorded.
type Rollout struct {
	Total     Usage
	HasTotal  bool
	ErrorInfo string
	ErrorText string
	// Commands are the thread's exec_command calls with their outputs
	// (response items function_call and function_call_output), in order:
	// the stream of `codex exec --json` does not list every one.
	Commands []Command
}

// maxRollout bounds the bytes of a rollout file read.
const maxRollout = 64 << 20

// ReadRollout reads the rollout file at path (false when it cannot be
// read). codex_error_info is a string ("usage_limit_exceeded") or an
// object with one key ({"http_connection_failed":{...}}): ErrorInfo is
// that string or key.
func ReadRollout(path string) (Rollout, bool) {
	f, err := os.Open(path)
	if err != nil || path == "" {
		return Rollout{}, false
	}
	defer f.Close()
	var r Rollout
	calls := map[string]string{}
	sc := bufio.NewScanner(&limited{f: f, n: maxRollout})
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Info *struct {
					Total *Usage `json:"total_token_usage"`
				} `json:"info"`
				Error *struct {
					Message string          `json:"message"`
					Info    json.RawMessage `json:"codex_error_info"`
				} `json:"error"`
				Message   string          `json:"message"`
				ErrorInfo json.RawMessage `json:"codex_error_info"`
				Thread    *Usage          `json:"thread_token_usage"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		if l.Type == "response_item" {
			r.call(sc.Bytes(), calls)
			continue
		}
		if l.Type == "token_usage_record" && l.Payload.Thread != nil {
			r.Total, r.HasTotal = *l.Payload.Thread, true
			continue
		}
		if l.Type != "event_msg" {
			continue
		}
		p := l.Payload
		if p.Type == "token_count" && p.Info != nil && p.Info.Total != nil {
			r.Total, r.HasTotal = *p.Info.Total, true
		}
		info, text := p.ErrorInfo, p.Message
		if p.Error != nil {
			info, text = p.Error.Info, p.Error.Message
		}
		if name := errorInfoName(info); name != "" {
			r.ErrorInfo, r.ErrorText = name, text
		}
	}
	return r, true
}

// call records a response item of an exec_command call (its command, by
// call id) or of its output (a Command, with the exit code the output's
// "Process exited with code N" line gives).
func (r *Rollout) call(line []byte, calls map[string]string) {
	var l struct {
		Payload struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			CallID    string `json:"call_id"`
			Arguments string `json:"arguments"`
			Output    any    `json:"output"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil {
		return
	}
	p := l.Payload
	switch p.Type {
	case "function_call":
		if p.Name == "exec_command" {
			var a struct {
				Cmd string `json:"cmd"`
			}
			_ = json.Unmarshal([]byte(p.Arguments), &a)
			calls[p.CallID] = a.Cmd
		}
	case "function_call_output":
		cmd, ok := calls[p.CallID]
		out, isText := p.Output.(string)
		if !ok || !isText {
			return
		}
		c := Command{Command: cmd, Output: out}
		if m := exitLine.FindStringSubmatch(out); m != nil {
			c.ExitCode, _ = strconv.Atoi(m[1])
		}
		r.Commands = append(r.Commands, c)
	}
}

// exitLine is how Codex 0.171.0 tells the model a command's exit code.
var exitLine = regexp.MustCompile(`(?m)^Process exited with code (\d+)`)

// errorInfoName is the name of a codex_error_info value.
func errorInfoName(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		for k := range m {
			return k
		}
	}
	return ""
}

// limited reads at most n bytes of f.
type limited struct {
	f *os.File
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, os.ErrClosed
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
