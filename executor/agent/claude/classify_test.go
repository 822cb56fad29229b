package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Result lines as the real CLI 2.1.328 prints them (shared/reference/claude-cli.md).
const (
	okImplement  = `{"type":"result","subtype":"success","is_error":false,"duration_ms":2210,"num_turns":3,"result":"{\"status\":\"done\",\"summary\":\"added f\"}","session_id":"s","total_cost_usd":0.0016,"usage":{"input_tokens":200,"cache_creation_input_tokens":10,"cache_read_input_tokens":500,"output_tokens":40},"structured_output":{"status":"done","summary":"added f"}}`
	okReview     = `{"type":"result","subtype":"success","is_error":false,"result":"","total_cost_usd":0.0008,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20},"structured_output":{"verdict":"fine","findings":[{"severity":"minor","file":"a.go","line":3,"text":"rename"}]}}`
	noReport     = `{"type":"result","subtype":"success","is_error":false,"result":"I am done.","total_cost_usd":0.0008,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20}}`
	api429       = `{"type":"result","subtype":"success","is_error":true,"result":"API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit","terminal_reason":"api_error","api_error_status":429,"api_error_type":"rate_limit_error","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`
	usageLimit   = `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 429 usage limit reached; resets at 2026-11-30T05:00:00Z","terminal_reason":"api_error","api_error_status":429,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`
	api500       = `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 Internal server error. This is a server-side issue, usually temporary","terminal_reason":"api_error","api_error_status":500,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`
	maxTurns     = `{"type":"result","subtype":"error_max_turns","is_error":true,"terminal_reason":"max_turns","num_turns":3,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":60}}`
	schemaGaveUp = `{"type":"result","subtype":"error_max_structured_output_retries","is_error":true,"terminal_reason":"structured_output_retry_exhausted","usage":{"input_tokens":600,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":120}}`
	sigint       = `{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_tools","usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20}}`
	badReport    = `{"type":"result","subtype":"success","is_error":false,"structured_output":{"status":"finished","summary":"x"},"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}`
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		e      Ended
		status state.StepStatus
		cause  string
		usage  int64
	}{
		{"ok implement", Ended{Result: []byte(okImplement), Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepOK, "", 250},
		{"ok review", Ended{Result: []byte(okReview), Step: state.StepReview, ReportSchema: state.StepReview.ReportSchema()}, state.StepOK, "", 120},
		{"no report though exit 0", Ended{Result: []byte(noReport), Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepFailed, agent.CauseNoReport, 120},
		{"429 rate limit", Ended{Result: []byte(api429), Proc: proc.Result{ExitCode: 1}, Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepQuota, "rate limit", 0},
		{"500 (subtype success!)", Ended{Result: []byte(api500), Proc: proc.Result{ExitCode: 1}, Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepFailed, "API error 500: API Error: 500 Internal server error", 0},
		{"max turns", Ended{Result: []byte(maxTurns), Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepFailed, "maximum number of turns (3)", 360},
		{"schema retries", Ended{Result: []byte(schemaGaveUp), Step: state.StepReview, ReportSchema: state.StepReview.ReportSchema()}, state.StepFailed, "gave up on the structured report", 720},
		{"SIGINT exits 0", Ended{Result: []byte(sigint), Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepCut, "aborted: aborted_tools", 120},
		{"report off schema", Ended{Result: []byte(badReport), Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepFailed, `status "finished"`, 2},
		{"review report for a write step", Ended{Result: []byte(okReview), Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepFailed, "unknown field", 120},
		{"killed, no result", Ended{Proc: proc.Result{ExitCode: -1, Signal: syscall.SIGKILL}, Step: state.StepReview, ReportSchema: state.StepReview.ReportSchema()}, state.StepCut, "killed by killed", 0},
		{"exit 1, no result", Ended{Proc: proc.Result{ExitCode: 1}, Stderr: []byte("Error: Session ID x is already in use.\n"), Step: state.StepFix, ReportSchema: state.StepFix.ReportSchema()}, state.StepFailed, "exit 1 without a result: Error: Session ID x is already in use.", 0},
		{"timed out", Ended{TimedOut: true, Proc: proc.Result{Stopped: true}}, state.StepTimedOut, "timed out", 0},
		{"timed out, extended", Ended{TimedOut: true, Proc: proc.Result{Stopped: true}, Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema(), Timeout: 20 * time.Minute, Extensions: 2},
			state.StepTimedOut, "implement timed out after 20m (extended 2×)", 0},
		{"cancelled", Ended{Cancelled: true, Result: []byte(okImplement), Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}, state.StepInterrupted, "stopped by cadence", 250},
		{"processes limit", Ended{Proc: proc.Result{ExitCode: -1, Signal: syscall.SIGKILL, LimitHit: proc.LimitProcesses}, Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()},
			state.StepFailed, "reached its processes limit: its processes were ended", 0},
		{"memory limit after a result", Ended{Result: []byte(okImplement), Proc: proc.Result{LimitHit: proc.LimitMemory}, Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()},
			state.StepFailed, "reached its memory limit", 250},
		{"left its cgroup", Ended{Proc: proc.Result{ExitCode: -1, Signal: syscall.SIGKILL, LimitHit: proc.LimitLeftCgroup}, Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()},
			state.StepFailed, "left its cgroup (its limits could not hold)", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.e.Now = now
			o := Classify(tc.e)
			if o.Status != tc.status || !strings.Contains(o.Cause, tc.cause) || o.Usage.Counted() != tc.usage {
				t.Errorf("got %s %q usage %d; want %s %q %d", o.Status, o.Cause, o.Usage.Counted(), tc.status, tc.cause, tc.usage)
			}
			if o.LimitHit != tc.e.Proc.LimitHit && !tc.e.Cancelled && !tc.e.TimedOut {
				t.Errorf("limit hit %q, want %q", o.LimitHit, tc.e.Proc.LimitHit)
			}
		})
	}
	o := Classify(Ended{Result: []byte(usageLimit), Now: now})
	if o.Status != state.StepQuota || o.ResetAt == nil || !o.ResetAt.Equal(time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)) {
		t.Errorf("usage limit: %+v", o)
	}
	o = Classify(Ended{Result: []byte(okReview), Step: state.StepReview, ReportSchema: state.StepReview.ReportSchema()})
	if !o.Report.Conform() || o.Report.Findings[0].File != "a.go" || o.CostMicros != 800 {
		t.Errorf("review report %+v cost %d", o.Report, o.CostMicros)
	}
}

func TestResetTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	for msg, want := range map[string]time.Time{
		"Claude AI usage limit reached|1796014800":           time.Unix(1796014800, 0).UTC(),
		"rate limited; try again in 90 seconds":              now.Add(90 * time.Second),
		"usage limit reached, resets in 2 hours":             now.Add(2 * time.Hour),
		"limit; resets at 2026-11-30T06:30:00+01:00 (Paris)": time.Date(2026, 11, 30, 5, 30, 0, 0, time.UTC),
	} {
		got := resetTime(msg, now)
		if got == nil || !got.Equal(want) {
			t.Errorf("resetTime(%q) = %v, want %v", msg, got, want)
		}
	}
	if resetTime("API Error: Request rejected (429)", now) != nil {
		t.Error("a reset time out of nothing")
	}
}

func TestStreamCountsEachTurnOnce(t *testing.T) {
	stream := strings.Join([]string{
		`{"type":"system","subtype":"init","session_id":"s"}`,
		`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-5-5","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":50,"output_tokens":10}}}`,
		`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-5-5","content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":50,"output_tokens":10}}}`,
		`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":3,"retry_delay_ms":600,"error_status":429,"error":"rate_limit"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","content":"a.go"}]}}`,
		`{"type":"assistant","message":{"id":"m2","model":"claude-sonnet-5-5","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":120,"cache_creation_input_tokens":5,"cache_read_input_tokens":0,"output_tokens":30}}}`,
		`{"type":"assistant","message":{"id":"x","model":"<synthetic>","content":[],"usage":{"input_tokens":999,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}`,
		okImplement,
		"not json",
	}, "\n")
	var seen []state.Usage
	var notes []string
	w := newStreamWatch(func(u state.Usage) { seen = append(seen, u) }, func(n string) { notes = append(notes, n) })
	w.consume(strings.NewReader(stream), nil)
	if u := w.total(); u.Counted() != 265 || u.CacheRead != 50 {
		t.Errorf("total %+v", u)
	}
	if string(w.lastResult()) != okImplement || w.retries != 1 {
		t.Errorf("result %q retries %d", w.lastResult(), w.retries)
	}
	if len(seen) != 3 || strings.Join(notes, ",") != "tool Bash,API retry 1/3 after rate_limit" {
		t.Errorf("progress %v notes %v", seen, notes)
	}
}

func TestTranscriptUsage(t *testing.T) {
	home := t.TempDir()
	p := TranscriptPath([]string{"HOME=" + home}, "/home/me/my.proj", "sess")
	if !strings.HasSuffix(p, ".claude/projects/-home-me-my-proj/sess.jsonl") {
		t.Fatalf("path %s", p)
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(strings.Join([]string{
		`{"type":"user","message":{"content":"x"}}`,
		`{"type":"assistant","message":{"id":"m1","model":"m","usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}}`,
		`{"type":"assistant","message":{"id":"m1","model":"m","usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}}`,
		`{"type":"assistant","message":{"id":"m2","model":"m","usage":{"input_tokens":20,"cache_creation_input_tokens":1,"cache_read_input_tokens":0,"output_tokens":4}}}`,
	}, "\n")), 0o644)
	if tr, ok := transcriptTurns(p); !ok || tr.total().Counted() != 40 {
		t.Errorf("usage %+v %v", tr, ok)
	}
}

func TestArgs(t *testing.T) {
	a := &spec.Agent{Name: "claude", Kind: "claude", Command: "claude", Settings: &Settings{PermissionMode: "acceptEdits", AllowedTools: []string{"Bash", "Edit"},
		DisallowedTools: []string{"Agent", "Bash(git push:*)"}, AppendSystemPrompt: "be brief"}}
	s := agent.Session{Agent: a, Model: "opus", SessionID: "id-1", Step: state.StepReview, ReportSchema: state.StepReview.ReportSchema(), AddDirs: []string{"/w/web"}}
	args, err := Args(s, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, " | ")
	// The prompt goes on standard input: -p has no argument.
	for _, want := range []string{"-p | --output-format | stream-json | --verbose", "--model | opus", "--session-id | id-1",
		"--permission-mode | acceptEdits", "--allowedTools | Bash Edit", "--disallowedTools | Agent Bash(git push:*)", "--add-dir | /w/web",
		"--append-system-prompt | be brief", `"verdict"`} {
		if !strings.Contains(got, want) {
			t.Errorf("args lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "--settings") {
		t.Errorf("a session without the sandbox has settings: %s", got)
	}
	args, _ = Args(s, true, nil)
	if got := strings.Join(args, " "); !strings.Contains(got, "--resume id-1") || strings.Contains(got, "--session-id") {
		t.Errorf("resume args: %s", got)
	}
}

func TestStreamSeesPushAttempts(t *testing.T) {
	line := func(cmd string) string {
		return `{"type":"assistant","message":{"id":"` + cmd + `","model":"m","content":[{"type":"tool_use","name":"Bash","input":{"command":` + strconvQuote(cmd) + `}}],"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`
	}
	w := newStreamWatch(nil, nil)
	w.consume(strings.NewReader(strings.Join([]string{
		line("git -C . push origin HEAD:x"),
		line("bash -c 'git push'"),
		line("git status && go test ./..."),
		line("echo push"),
	}, "\n")), nil)
	if got := w.pushAttempts(); len(got) != 2 {
		t.Errorf("push attempts %q", got)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestTool checks what preflight and `cadence version` learn of Claude
// Code, and that the override reaches the claude agent only.
func TestTool(t *testing.T) {
	tool := New().Tool()
	if tool.EnvOverride != "CADENCE_CLAUDE_BIN" || strings.Join(tool.VersionArgs, " ") != "--version" || tool.MinVersion != MinVersion || !strings.Contains(tool.Install, "npm install -g @anthropic-ai/claude-code") {
		t.Errorf("tool %+v", tool)
	}
	if New().KillLeftovers("") != 0 {
		t.Error("an empty mark killed something")
	}
}
