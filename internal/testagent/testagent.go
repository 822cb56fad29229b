// Package testagent is a scripted stand-in for the Claude Code CLI, for
// cadence's own tests: it accepts claude's flags, acts as a script says
// (sleep, commit, fail, hang, ask, find), records when each session starts
// and ends, and prints a result JSON like `claude -p --output-format json`.
//
// Environment: FAKE_AGENT_SCRIPT is a JSON file of actions; FAKE_AGENT_LOG a
// file that gets a line per session start and end ("start|end <pid> <lot>
// <step> <unix-nanos>"). The action for a session is looked up as
// "<lot>/<step><pass>" (fix passes: "L1/fix2"), "<lot>/<step>", "*/<step>",
// then "default".
package testagent

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/schemas"
)

// Action is what a session does.
type Action struct {
	SleepMS int    `json:"sleep_ms,omitempty"`
	Commit  bool   `json:"commit,omitempty"`
	Dirty   bool   `json:"dirty,omitempty"`
	Fail    string `json:"fail,omitempty"`
	Quota   bool   `json:"quota,omitempty"`
	// ResetAt, with Quota, makes the limit a usage limit that resets at
	// that Unix time, worded as the CLI relays the API's with an API key.
	ResetAt int64 `json:"reset_at,omitempty"`
	// APIStatus, with Fail, is the result's api_error_status (529:
	// overloaded).
	APIStatus   int  `json:"api_status,omitempty"`
	Hang        bool `json:"hang,omitempty"`
	NoReport    bool `json:"no_report,omitempty"`
	EchoBrief   bool `json:"echo_brief,omitempty"`
	AlreadyDone bool `json:"already_done,omitempty"`
	// Run is a shell command the session runs in its folder first.
	Run       string           `json:"run,omitempty"`
	Tokens    int64            `json:"tokens,omitempty"`
	Questions []string         `json:"questions,omitempty"`
	Findings  []map[string]any `json:"findings,omitempty"`
}

// Script maps session keys to actions.
type Script map[string]Action

var fixPass = regexp.MustCompile(`fix pass (\d+)`)

// Main runs the fake CLI with os.Args and returns its exit code.
func Main() int {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("2.1.328 (Claude Code)")
		return 0
	}
	var brief, session string
	fromStdin := false
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-p" && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")):
			fromStdin = true // like claude: -p with no prompt reads it from stdin
		case args[i] == "-p":
			brief = args[i+1]
		case args[i] == "--session-id" && i+1 < len(args):
			session = args[i+1]
		}
	}
	if fromStdin {
		b, _ := io.ReadAll(os.Stdin)
		brief = string(b)
	}
	lot := os.Getenv("CADENCE_LOT")
	step, pass := "implement", ""
	switch {
	case strings.HasPrefix(brief, "Check whether the work"):
		step = "precheck"
	case strings.HasPrefix(brief, "Re-review"):
		step = "review-recheck"
	case strings.Contains(brief, "fix minor findings now"):
		step = "fix-minors"
	case strings.HasPrefix(brief, "Look at the running application"):
		step = "ux"
		if m := fixPass.FindStringSubmatch(brief); m != nil {
			pass = m[1]
		}
	case strings.HasPrefix(brief, "Review the work"):
		step = "review"
		if m := fixPass.FindStringSubmatch(brief); m != nil {
			pass = m[1]
		}
	case fixPass.MatchString(brief):
		step, pass = "fix", fixPass.FindStringSubmatch(brief)[1]
	}
	a := lookup(lot, step, pass)
	record("start", lot, step)
	defer record("end", lot, step)
	if a.Hang {
		for {
			time.Sleep(time.Hour)
		}
	}
	time.Sleep(time.Duration(a.SleepMS) * time.Millisecond)
	if a.Run != "" {
		if out, err := exec.Command("sh", "-c", a.Run).CombinedOutput(); err != nil {
			return fail(fmt.Errorf("run %q: %v: %s", a.Run, err, out))
		}
	}
	if a.Commit {
		name := fmt.Sprintf("%s-%s%s.txt", lot, step, pass)
		if err := os.WriteFile(name, []byte(session+"\n"), 0o644); err != nil {
			return fail(err)
		}
		if out, err := exec.Command("git", "add", name).CombinedOutput(); err != nil {
			return fail(fmt.Errorf("%v: %s", err, out))
		}
		if out, err := exec.Command("git", "commit", "-qm", fmt.Sprintf("%s: %s%s (%s)", lot, step, pass, lot)).CombinedOutput(); err != nil {
			return fail(fmt.Errorf("%v: %s", err, out))
		}
	}
	if a.Dirty {
		os.WriteFile(filepath.Join(".", "uncommitted.txt"), []byte("x\n"), 0o644)
	}
	res := map[string]any{"type": "result", "subtype": "success", "is_error": false, "session_id": session,
		"total_cost_usd": float64(a.Tokens) * 0.000002,
		"usage":          map[string]int64{"input_tokens": a.Tokens / 2, "cache_creation_input_tokens": 0, "cache_read_input_tokens": a.Tokens, "output_tokens": a.Tokens - a.Tokens/2}}
	switch {
	case a.Quota && a.ResetAt > 0:
		res["is_error"], res["api_error_status"], res["result"] = true, 429, fmt.Sprintf("API Error: Request rejected (429) · Claude AI usage limit reached|%d", a.ResetAt)
	case a.Quota:
		res["is_error"], res["api_error_status"], res["result"] = true, 429, "API Error: Request rejected (429) · rate limit"
	case a.Fail != "":
		res["is_error"], res["result"], res["terminal_reason"] = true, a.Fail, "api_error"
		if a.APIStatus != 0 {
			res["api_error_status"] = a.APIStatus
		}
	case a.NoReport:
		res["result"] = "done, no report"
	default:
		res["structured_output"] = Report(state.StepKind(step), a, brief)
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	if res["is_error"] == true {
		return 1
	}
	return 0
}

// Report is the structured report a session of step kind step gives when
// it acts as a says (brief is its brief, for EchoBrief): every field the
// test agent knows how to fill, kept to the properties of the kind's
// report schema (state.KindInfo.ReportSchema, a file of package schemas),
// so that a new kind whose schema uses these fields needs nothing here.
func Report(step state.StepKind, a Action, brief string) map[string]any {
	findings := a.Findings
	if findings == nil {
		findings = []map[string]any{}
	}
	all := map[string]any{"status": "done", "summary": "did " + string(step),
		"verdict": "reviewed", "findings": findings,
		"already_done": a.AlreadyDone, "evidence": "looked"}
	if a.EchoBrief {
		all["summary"] = brief
	}
	if len(a.Questions) > 0 {
		all["questions"] = a.Questions
	}
	props := schemaProperties(step.ReportSchema())
	rep := map[string]any{}
	for k, v := range all {
		if props[k] {
			rep[k] = v
		}
	}
	return rep
}

// schemaProperties returns the names of the top-level properties of the
// named schema of package schemas (none when it cannot be read).
func schemaProperties(name string) map[string]bool {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if b, err := schemas.FS.ReadFile(name); err == nil {
		_ = json.Unmarshal(b, &doc)
	}
	out := map[string]bool{}
	for k := range doc.Properties {
		out[k] = true
	}
	return out
}

// unscripted is what a session does with no script entry: a step kind
// that writes (state.KindInfo.Writes) commits.
func unscripted(step string) Action {
	i, _ := state.Info(state.StepKind(step))
	return Action{Commit: i.Writes}
}

func lookup(lot, step, pass string) Action {
	p := os.Getenv("FAKE_AGENT_SCRIPT")
	if p == "" {
		return unscripted(step)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Action{Fail: err.Error()}
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		return Action{Fail: err.Error()}
	}
	for _, k := range []string{lot + "/" + step + pass, lot + "/" + step, "*/" + step, "default"} {
		if a, ok := s[k]; ok {
			return a
		}
	}
	return unscripted(step)
}

func record(what, lot, step string) {
	p := os.Getenv("FAKE_AGENT_LOG")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %d %s %s %d\n", what, os.Getpid(), lot, step, time.Now().UnixNano())
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "fake agent:", err)
	return 2
}
