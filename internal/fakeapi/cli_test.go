//go:build unix

package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/ids"
)

// These tests drive the real Claude Code CLI (see FindCLI) against the fake.

// cliTimeout bounds every CLI invocation.
const cliTimeout = 60 * time.Second

// cliRun is how one CLI invocation ended.
type cliRun struct {
	Stdout, Stderr string
	Exit           int
	Took           time.Duration
}

// runCLI runs the CLI in dir with env, in its own process group, bounded by
// cliTimeout; the group is killed when the time is up.
func runCLI(t *testing.T, dir string, env []string, args ...string) cliRun {
	t.Helper()
	bin := FindCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := cliRun{Stdout: stdout.String(), Stderr: stderr.String(), Took: time.Since(start)}
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers in the group
	}
	if ctx.Err() != nil {
		t.Fatalf("claude %v: timed out after %v\nstdout: %s\nstderr: %s", args, cliTimeout, r.Stdout, r.Stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("claude %v: %v", args, err)
	}
	t.Logf("claude %s: exit %d in %v", strings.Join(args[:2], " "), r.Exit, r.Took.Round(time.Millisecond))
	return r
}

// gitRepo makes a throwaway git repository.
func gitRepo(t *testing.T, env []string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, env, "init", "-q", "-b", "master")
	return dir
}

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// result decodes a JSON result object (the output of --output-format json,
// or a stream-json line).
func result(t *testing.T, r cliRun, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON result: %v\nstdout: %s\nstderr: %s", err, r.Stdout, r.Stderr)
	}
	return m
}

// usage is the usage object of a result as "in/out/cache-creation/cache-read".
func usage(m map[string]any) string {
	u, _ := m["usage"].(map[string]any)
	return fmt.Sprintf("%v/%v/%v/%v", u["input_tokens"], u["output_tokens"], u["cache_creation_input_tokens"], u["cache_read_input_tokens"])
}

func TestCLIText(t *testing.T) {
	FindCLI(t)
	t.Parallel()
	srv := Start(t, map[string]Script{"hello": {
		Text("Hello from the fake.").WithUsage(Usage{InputTokens: 123, OutputTokens: 45, CacheCreationInputTokens: 6, CacheReadInputTokens: 7}),
	}})
	env := CLIEnv(t, srv)
	r := runCLI(t, gitRepo(t, env), env, "-p", "[[fake:hello]] hi", "--output-format", "json")
	m := result(t, r, r.Stdout)
	if r.Exit != 0 || m["is_error"] != false || m["result"] != "Hello from the fake." {
		t.Errorf("exit %d, result %v", r.Exit, m)
	}
	if got := usage(m); got != "123/45/6/7" {
		t.Errorf("usage %s, want 123/45/6/7", got)
	}
	reqs := srv.Turns("hello")
	if len(reqs) != 1 || !reqs[0].Stream || reqs[0].Turn != 0 || reqs[0].SessionID != m["session_id"] || reqs[0].Model == "" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestCLICommitAndReport(t *testing.T) {
	FindCLI(t)
	t.Parallel()
	srv := Start(t, map[string]Script{"commit": {
		Bash(`echo hi > f.txt && git add f.txt && git commit -m "L1: add f"`),
		StructuredOutput(map[string]string{"status": "done", "summary": "added f"}),
	}})
	env := CLIEnv(t, srv)
	dir := gitRepo(t, env)
	schema := `{"type":"object","properties":{"status":{"type":"string"},"summary":{"type":"string"}},"required":["status","summary"]}`
	r := runCLI(t, dir, env, "-p", "[[fake:commit]] add f and report",
		"--permission-mode", "acceptEdits", "--allowedTools", "Bash", "--json-schema", schema,
		"--output-format", "stream-json", "--verbose")
	if r.Exit != 0 {
		t.Errorf("exit %d\nstderr: %s", r.Exit, r.Stderr)
	}
	if got := git(t, dir, env, "log", "--format=%s"); got != "L1: add f" {
		t.Errorf("git log: %q", got)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	last := result(t, r, lines[len(lines)-1])
	so, _ := json.Marshal(last["structured_output"])
	if last["type"] != "result" || last["is_error"] != false || string(so) != `{"status":"done","summary":"added f"}` {
		t.Errorf("last line: %v", last)
	}
	if d, _ := last["permission_denials"].([]any); len(d) != 0 {
		t.Errorf("permission denials: %v", d)
	}
	reqs := srv.Turns("commit")
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if names := fmt.Sprint(reqs[0].ToolNames()); !strings.Contains(names, "StructuredOutput") || !strings.Contains(names, "Bash") {
		t.Errorf("tools offered: %s", names)
	}
	if tr := reqs[0].ToolResults(); len(tr) != 0 {
		t.Errorf("first request has tool results %+v", tr)
	}
	tr := reqs[1].ToolResults()
	if len(tr) != 1 || tr[0].IsError || !strings.Contains(tr[0].Text, "L1: add f") || !strings.HasPrefix(tr[0].ToolUseID, "toolu_") {
		t.Errorf("second request's tool results %+v", tr)
	}
}

func TestCLIRateLimit(t *testing.T) {
	FindCLI(t)
	t.Parallel()
	t.Run("recovers", func(t *testing.T) {
		srv := Start(t, map[string]Script{"e429": {RateLimited("1"), RateLimited("1"), Text("recovered")}})
		env := CLIEnv(t, srv, "CLAUDE_CODE_MAX_RETRIES=2")
		r := runCLI(t, gitRepo(t, env), env, "-p", "[[fake:e429]] hello", "--output-format", "json")
		m := result(t, r, r.Stdout)
		if r.Exit != 0 || m["is_error"] != false || m["result"] != "recovered" {
			t.Errorf("exit %d, result %v", r.Exit, m)
		}
		reqs := srv.Turns("e429")
		if len(reqs) != 3 || reqs[0].Status != 429 || reqs[1].Status != 429 || reqs[2].Status != 200 || reqs[2].SessionID != reqs[0].SessionID {
			t.Errorf("requests %+v", reqs)
		}
		if gap := reqs[1].Time.Sub(reqs[0].Time); gap < time.Second {
			t.Errorf("retry after %v despite retry-after: 1", gap)
		}
	})
	t.Run("forever", func(t *testing.T) {
		srv := Start(t, map[string]Script{"e429": {RateLimited("1").Forever()}})
		env := CLIEnv(t, srv)
		r := runCLI(t, gitRepo(t, env), env, "-p", "[[fake:e429]] hello", "--output-format", "json")
		m := result(t, r, r.Stdout)
		if r.Exit != 1 || m["is_error"] != true || m["api_error_status"] != 429.0 || m["terminal_reason"] != "api_error" {
			t.Errorf("exit %d, result %v", r.Exit, m)
		}
		if n := len(srv.Turns("e429")); n != 1 {
			t.Errorf("%d requests with CLAUDE_CODE_MAX_RETRIES=0", n)
		}
	})
}

func TestCLIDrop(t *testing.T) {
	FindCLI(t)
	t.Parallel()
	srv := Start(t, map[string]Script{"drop": {Drop().Forever()}})
	env := CLIEnv(t, srv)
	r := runCLI(t, gitRepo(t, env), env, "-p", "[[fake:drop]] hello", "--output-format", "json")
	m := result(t, r, r.Stdout)
	if r.Exit != 1 || m["is_error"] != true || !strings.Contains(fmt.Sprint(m["result"]), "Connection") {
		t.Errorf("exit %d, result %v", r.Exit, m)
	}
}

func TestCLINoStructuredOutput(t *testing.T) {
	FindCLI(t)
	t.Parallel()
	srv := Start(t, map[string]Script{"noso": {Text("I did it."), Text("Still no report.")}})
	env := CLIEnv(t, srv)
	schema := `{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`
	r := runCLI(t, gitRepo(t, env), env, "-p", "[[fake:noso]] do it", "--json-schema", schema, "--output-format", "json")
	m := result(t, r, r.Stdout)
	if _, ok := m["structured_output"]; ok || r.Exit != 0 || m["is_error"] != false || m["result"] != "Still no report." {
		t.Errorf("exit %d, result %v", r.Exit, m)
	}
	reqs := srv.Turns("noso")
	if len(reqs) != 2 || reqs[0].Contains("[structured-output-enforce]") || !reqs[1].Contains("[structured-output-enforce]") {
		t.Errorf("%d requests; the second must be the enforce request", len(reqs))
	}
}

func TestCLIResume(t *testing.T) {
	FindCLI(t)
	t.Parallel()
	srv := Start(t, map[string]Script{"sess": {Text("first answer"), Text("second answer")}})
	env := CLIEnv(t, srv) // one HOME for both invocations
	dir := gitRepo(t, env)
	id := newUUID()
	r := runCLI(t, dir, env, "-p", "[[fake:sess]] first", "--session-id", id, "--output-format", "json")
	if m := result(t, r, r.Stdout); r.Exit != 0 || m["result"] != "first answer" || m["session_id"] != id {
		t.Errorf("first: exit %d, result %v", r.Exit, m)
	}
	r = runCLI(t, dir, env, "-p", "[[fake:sess]] second", "--resume", id, "--output-format", "json")
	if m := result(t, r, r.Stdout); r.Exit != 0 || m["result"] != "second answer" || m["session_id"] != id {
		t.Errorf("resume: exit %d, result %v", r.Exit, m)
	}
	reqs := srv.Turns("sess")
	if len(reqs) != 2 || reqs[0].Turn != 0 || reqs[1].Turn != 1 {
		t.Fatalf("requests %+v", reqs)
	}
	for _, q := range reqs {
		if q.SessionID != id {
			t.Errorf("session header %q, want %q", q.SessionID, id)
		}
	}
	if !reqs[1].Contains("first answer") {
		t.Error("the resumed request lacks the history")
	}
}

func TestCLIAutoModeSide(t *testing.T) {
	FindCLI(t)
	t.Parallel()
	srv := Start(t, map[string]Script{"auto": {Bash(`echo hi > f.txt && git add f.txt && git commit -m "L1: add f"`), Text("committed")}})
	srv.SetSide("<block>no</block>")
	// The auto-mode classifier is "nonessential traffic": with the variable
	// set, auto mode refuses every checked action.
	env := CLIEnv(t, srv, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")
	dir := gitRepo(t, env)
	r := runCLI(t, dir, env, "-p", "[[fake:auto]] add f", "--permission-mode", "auto", "--output-format", "json")
	if m := result(t, r, r.Stdout); r.Exit != 0 || m["result"] != "committed" {
		t.Errorf("exit %d, result %v\nstderr: %s", r.Exit, m, r.Stderr)
	}
	if got := git(t, dir, env, "log", "--format=%s"); got != "L1: add f" {
		t.Errorf("git log: %q", got)
	}
	var side []Request
	for _, q := range srv.RequestsFor("auto") {
		if q.Answer == AnswerSide {
			side = append(side, q)
		}
	}
	if len(side) != 1 || side[0].Stream || side[0].Status != 200 {
		t.Errorf("%d classifier requests: %+v", len(side), side)
	}
}

// newUUID is a random version 4 UUID.
func newUUID() string { return ids.UUID() }
