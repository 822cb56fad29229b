//go:build unix

package main

// Helpers of the end-to-end tests of Codex sessions (e2e_codex*_test.go):
// the same world as newE2E's (the wave, its templates with the marker
// line, the repository app, the real Claude Code CLI on the fake Messages
// API) plus the real pinned Codex CLI on the fake Responses API of
// internal/fakeapi/openai, as the agent block "codex".

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/fakeapi/openai"
	"github.com/cadence-run/cadence/internal/state"
)

// codexModel is the model of the e2e waves' codex agent.
const codexModel = "gpt-5.5-codex"

// codexAgent is the e2e waves' codex agent block: the fake's provider, no
// retries of the CLI's own (a scripted 429 ends the session at once),
// prices for every model (a session's cost is estimated from them).
// extra holds more attributes.
func codexAgent(cli, extra string) string {
	return fmt.Sprintf(`
agent "codex" {
  kind     = "codex"
  command  = %q
  model    = %q
  provider = %q
  retries  = 0
  prices   = { "*" = { input = 1.25, cached = 0.125, output = 10 } }
%s
}
`, cli, codexModel, openai.Provider, extra)
}

// codexE2E is a scenario with both CLIs: e.srv is the Messages fake (the
// claude sessions), oai the Responses fake (the codex sessions).
type codexE2E struct {
	*e2e
	oai     *openai.Server
	oaiURL  string // the splitter in front of oai (its base_url)
	codex   string // the codex binary
	codexHo string // CODEX_HOME
	scripts map[string]openai.Script
}

// codexOpts shape a codex scenario's wave: waveOpts, and CodexAgent holds
// extra attributes of agent "codex".
type codexOpts struct {
	waveOpts
	CodexAgent string
}

// newCodexE2E makes a scenario (newE2E) whose wave also has agent "codex"
// (codexAgent) and whose environment runs the Codex CLI against the
// Responses fake with scripts: CODEX_HOME with the provider's config.toml
// and TMPDIR fresh folders side by side (the CLI refuses a CODEX_HOME
// under TMPDIR), the key in openai.KeyVar. A script named NAME~K (K ≥ 2)
// answers the K-th thread whose requests carry the marker NAME
// (splitThreads).
func newCodexE2E(t *testing.T, claude map[string]fakeapi.Script, codex map[string]openai.Script, o codexOpts) *codexE2E {
	t.Helper()
	cli := openai.FindCLI(t)
	o.More += codexAgent(cli, o.CodexAgent)
	if claude == nil {
		claude = map[string]fakeapi.Script{}
	}
	e := &codexE2E{e2e: newE2E(t, claude, o.waveOpts), codex: cli, scripts: codex}
	e.oai = openai.Start(t, nil)
	split := httptest.NewServer(splitThreads(e.oai, codex))
	t.Cleanup(split.Close)
	e.oaiURL = split.URL + "/v1"
	base := t.TempDir()
	e.codexHo = filepath.Join(base, "codex")
	tmp := filepath.Join(base, "tmp")
	for _, d := range []string{e.codexHo, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf("[model_providers.%s]\nname = %q\nbase_url = %q\nenv_key = %q\nwire_api = \"responses\"\n\n[analytics]\nenabled = false\n",
		openai.Provider, openai.Provider, e.oaiURL, openai.KeyVar)
	e.writeFile(filepath.Join(e.codexHo, "config.toml"), config)
	e.env = fakeapi.SetEnv(e.env, "CODEX_HOME="+e.codexHo, "TMPDIR="+tmp, openai.KeyVar+"=sk-fake")
	return e
}

// splitThreads serves the Responses fake, but gives the K-th thread (K ≥
// 2, by order of first request) of a marker NAME the script NAME~K when
// there is one, by rewriting the marker in its requests (as splitSessions
// does for the Messages fake): a step run again in a fresh session has the
// same brief. Threads are told apart by the session-id header, which a
// resumed thread (the formatting retry) keeps. The scripts are set on srv.
func splitThreads(srv *openai.Server, scripts map[string]openai.Script) http.Handler {
	for name, sc := range scripts {
		srv.SetScript(name, sc)
	}
	marker := regexp.MustCompile(`\[\[fake:([^\]\s"\\]+)\]\]`)
	var mu sync.Mutex
	order := map[string][]string{} // marker → thread ids, first seen first
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		thread := r.Header.Get("session-id")
		if m := marker.FindSubmatch(body); m != nil && thread != "" {
			name := string(m[1])
			mu.Lock()
			k := indexOf(order[name], thread)
			if k < 0 {
				order[name] = append(order[name], thread)
				k = len(order[name]) - 1
			}
			mu.Unlock()
			if alt := fmt.Sprintf("%s~%d", name, k+1); k > 0 && scripts[alt] != nil {
				body = bytes.ReplaceAll(body, m[0], []byte("[[fake:"+alt+"]]"))
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		srv.ServeHTTP(w, r)
	})
}

// codexTurns returns the recorded requests of the Responses fake that
// played a turn of the script marker.
func (e *codexE2E) codexTurns(marker string) []openai.Request {
	var out []openai.Request
	for _, r := range e.oai.RequestsFor(marker) {
		if r.Turn >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// codexDone is a write step's report, as a codex session gives it.
func codexDone(summary string) openai.Turn {
	return openai.Report(map[string]any{"status": "done", "summary": summary})
}

// codexReview is a review's report, as a codex session gives it.
func codexReview(verdict string, findings ...map[string]any) openai.Turn {
	if findings == nil {
		findings = []map[string]any{}
	}
	return openai.Report(map[string]any{"verdict": verdict, "findings": findings})
}

// codexCommit is an exec_command turn that writes name and commits it
// citing lot lot.
func codexCommit(lot, name, content string) openai.Turn {
	return openai.Exec(fmt.Sprintf("echo %s > %s && git add %s && git commit -q -m '%s: add %s (%s)'", content, name, name, lot, name, lot))
}

// served is the usage the Responses fake served the requests of marker
// (the scripts' turns, and the plain "done" of a thread past its script),
// in the CLI's raw names: what the sessions of marker must have recorded.
func (e *codexE2E) served(marker string) map[string]int64 {
	sum := map[string]int64{}
	for _, r := range e.oai.RequestsFor(marker) {
		u := openai.DefaultUsage
		if r.Turn >= 0 {
			sc := e.script(marker)
			if r.Turn < len(sc) && sc[r.Turn].Usage != nil {
				u = *sc[r.Turn].Usage
			}
			if r.Turn < len(sc) && (sc[r.Turn].Error != nil || sc[r.Turn].Failed != nil || sc[r.Turn].Hang) {
				continue
			}
		}
		sum["input_tokens"] += u.Input
		sum["cached_input_tokens"] += u.Cached
		sum["output_tokens"] += u.Output
		sum["reasoning_output_tokens"] += u.Reasoning
	}
	return sum
}

// script is the script the splitter set for marker.
func (e *codexE2E) script(marker string) openai.Script { return e.scripts[marker] }

// rawCodex is a step's raw usage without the fields that stay 0 (the
// Responses API reports no cache writes).
func rawCodex(s state.Step) map[string]int64 {
	out := map[string]int64{}
	for k, v := range s.RawUsage {
		if k != "cache_write_input_tokens" || v != 0 {
			out[k] = v
		}
	}
	return out
}

// lastToolOutput is the output of the last function call in a Responses
// API request's input (what the previous exec_command printed), "" when
// there is none.
func lastToolOutput(body []byte) string {
	var req struct {
		Input []struct {
			Type   string `json:"type"`
			Output any    `json:"output"`
		} `json:"input"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	for i := len(req.Input) - 1; i >= 0; i-- {
		if in := req.Input[i]; in.Type == "function_call_output" {
			switch o := in.Output.(type) {
			case string:
				return o
			default:
				b, _ := json.Marshal(o)
				return string(b)
			}
		}
	}
	return ""
}

// noCodexLeft fails the test when a process of the scenario's Codex CLI
// is alive (its environment holds the scenario's CODEX_HOME: the CLI and
// every tool child it started), or one of the sessions' marks.
func (e *codexE2E) noCodexLeft(sessions ...string) {
	e.t.Helper()
	e.noneLeft(sessions...)
	if left := marked("CODEX_HOME=" + e.codexHo); len(left) > 0 {
		e.t.Errorf("codex processes left running:\n%s", strings.Join(left, "\n"))
	}
}
