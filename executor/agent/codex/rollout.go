package codex

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
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
// token_count total, and the codex_error_info and message of the last
// error it recorded.
type Rollout struct {
	Total     Usage
	HasTotal  bool
	ErrorInfo string
	ErrorText string
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
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "event_msg" {
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
