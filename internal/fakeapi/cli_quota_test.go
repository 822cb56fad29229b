//go:build unix

package fakeapi

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCLIUsageLimit records what the CLI passes on of a usage limit
// (executor/agent/claude/quota.go reads it): with a subscription login, the
// anthropic-ratelimit-unified-* headers become a stream-json
// rate_limit_event carrying the reset time and a result text "You've hit
// your 5-hour limit · resets <clock> (<zone>)"; with an API key, the
// headers are dropped and the API's message is the result text and the
// transcript's API error line.
func TestCLIUsageLimit(t *testing.T) {
	FindCLI(t)
	t.Parallel()
	reset := time.Now().Add(42 * time.Minute).Unix()
	rs := strconv.FormatInt(reset, 10)
	limited := HTTPError(429, "rate_limit_error", "Claude AI usage limit reached|"+rs).
		WithHeader("anthropic-ratelimit-unified-status", "rejected").
		WithHeader("anthropic-ratelimit-unified-reset", rs).
		WithHeader("anthropic-ratelimit-unified-representative-claim", "five_hour")
	t.Run("subscription", func(t *testing.T) {
		srv := Start(t, map[string]Script{"q": {limited}})
		env := CLIEnv(t, srv, "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fake")
		r := runCLI(t, gitRepo(t, env), env, "-p", "[[fake:q]] hello", "--output-format", "stream-json", "--verbose")
		if r.Exit != 1 || !strings.Contains(r.Stdout, `"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":`+rs) {
			t.Errorf("exit %d, no rejected rate_limit_event with resetsAt %s:\n%s", r.Exit, rs, r.Stdout)
		}
		if !strings.Contains(r.Stdout, `"result":"You've hit your 5-hour limit · resets `) || !strings.Contains(r.Stdout, `"api_error_status":429`) {
			t.Errorf("result:\n%s", r.Stdout)
		}
	})
	t.Run("api key", func(t *testing.T) {
		srv := Start(t, map[string]Script{"q": {limited}})
		env := CLIEnv(t, srv)
		dir := gitRepo(t, env)
		r := runCLI(t, dir, env, "-p", "[[fake:q]] hello", "--output-format", "stream-json", "--verbose")
		if r.Exit != 1 || strings.Contains(r.Stdout, "rate_limit_event") || !strings.Contains(r.Stdout, `"result":"API Error: Request rejected (429) · Claude AI usage limit reached|`+rs+`"`) || r.Stderr != "" {
			t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.Exit, r.Stdout, r.Stderr)
		}
		var home string
		for _, e := range env {
			if v, ok := strings.CutPrefix(e, "HOME="); ok {
				home = v
			}
		}
		found := false
		filepath.Walk(filepath.Join(home, ".claude", "projects"), func(p string, fi os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, ".jsonl") {
				b, _ := os.ReadFile(p)
				found = found || strings.Contains(string(b), `"isApiErrorMessage":true`) && strings.Contains(string(b), "usage limit reached|"+rs)
			}
			return nil
		})
		if !found {
			t.Error("the transcript has no API error line with the message")
		}
	})
}
