package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// argValue is the value after flag in args, or "" when the flag is absent.
func argValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestArgsReadOnly: a read-only session gets no file tool, even when the
// agent allows them, and the git commands that write are denied; a write
// session of the same agent keeps them.
func TestArgsReadOnly(t *testing.T) {
	a := &spec.Agent{Name: "claude", Kind: "claude", Command: "claude", Settings: &Settings{PermissionMode: "acceptEdits",
		AllowedTools: []string{"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "Edit(src/**)", "Read"}, DisallowedTools: []string{"Agent", "Bash(git push:*)"}}}
	for _, sandbox := range []*Sandbox{nil, {}} {
		s := agent.Session{Agent: a, Model: "opus", SessionID: "id", Step: state.StepReview, ReportSchema: state.StepReview.ReportSchema(), ReadOnly: true, Dir: t.TempDir()}
		args, err := Args(s, false, sandbox)
		if err != nil {
			t.Fatal(err)
		}
		if got := argValue(args, "--allowedTools"); got != "Bash Read" {
			t.Errorf("sandbox %v: allowed tools %q, want Bash Read", sandbox != nil, got)
		}
		// Rules are space-separated; a rule's own spaces sit in parentheses.
		denied := " " + argValue(args, "--disallowedTools") + " "
		has := func(rule string) bool { return strings.Contains(denied, " "+rule+" ") }
		for _, want := range []string{"Agent", "Bash(git push:*)", "Edit", "Write", "MultiEdit", "NotebookEdit",
			"Bash(git commit:*)", "Bash(git add:*)", "Bash(git reset:*)", "Bash(git checkout:*)", "Bash(git stash:*)"} {
			if !has(want) {
				t.Errorf("sandbox %v: disallowed tools %q lack %s", sandbox != nil, denied, want)
			}
		}
		for _, reading := range []string{"Bash(git log:*)", "Bash(git diff:*)", "Bash(git status:*)", "Bash(git show:*)", "Bash"} {
			if has(reading) {
				t.Errorf("a reviewer may not run %s", reading)
			}
		}
		if set := argValue(args, "--settings"); strings.Contains(set, "Edit(") {
			t.Errorf("file rules for a read-only session: %s", set)
		}
	}
	if got := strings.Join(a.Settings.(*Settings).DisallowedTools, " "); got != "Agent Bash(git push:*)" {
		t.Errorf("the agent's own list changed: %s", got)
	}
	w := agent.Session{Agent: a, Model: "opus", SessionID: "id", Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema()}
	args, _ := Args(w, false, nil)
	if got, want := argValue(args, "--allowedTools"), "Bash Edit Write MultiEdit NotebookEdit Edit(src/**) Read"; got != want {
		t.Errorf("write session: allowed %q, want %q", got, want)
	}
	if got := argValue(args, "--disallowedTools"); got != "Agent Bash(git push:*)" {
		t.Errorf("write session: disallowed %q", got)
	}
}

// TestSandboxSettingsReadOnly: a read-only session's sandbox writes none
// of its worktrees, their git dirs nor the repository: all denied, only
// the cache allowed.
func TestSandboxSettingsReadOnly(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	app := gitRepo(t, dir, "lot")
	libDir := filepath.Join(dir, "l")
	os.Mkdir(libDir, 0o755)
	lib := gitRepo(t, libDir, "lotlib")
	a := &spec.Agent{Name: "claude", Kind: "claude", Settings: &Settings{AllowedTools: []string{"Bash", "Edit"}}}
	s := agent.Session{Agent: a, Model: "opus", SessionID: "id", Step: state.StepPrecheck, ReportSchema: state.StepPrecheck.ReportSchema(), ReadOnly: true,
		Dir: filepath.Join(dir, "lot"), AddDirs: []string{filepath.Join(libDir, "lotlib")}}
	cache := filepath.Join(dir, "cache")
	args, err := Args(s, false, &Sandbox{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	var st settings
	if err := json.Unmarshal([]byte(argValue(args, "--settings")), &st); err != nil {
		t.Fatal(err)
	}
	fs := st.Sandbox.Filesystem
	if !slices.Equal(fs.AllowWrite, []string{cache}) {
		t.Errorf("allowWrite %q, want the cache only", fs.AllowWrite)
	}
	appGit, libGit := filepath.Join(app, ".git"), filepath.Join(lib, ".git")
	for _, want := range []string{filepath.Join(dir, "lot"), filepath.Join(appGit, "worktrees", "lot"), appGit,
		filepath.Join(libDir, "lotlib"), filepath.Join(libGit, "worktrees", "lotlib"), libGit} {
		if !slices.Contains(fs.DenyWrite, want) {
			t.Errorf("denyWrite %q lacks %s", fs.DenyWrite, want)
		}
	}
	if len(st.Permissions.Allow) > 0 || !st.Sandbox.AutoAllowBashIfSandboxed {
		t.Errorf("permissions %q, auto-allow Bash %v", st.Permissions.Allow, st.Sandbox.AutoAllowBashIfSandboxed)
	}
}

// TestStreamSeesDenials: refused calls are read from the tool results (a
// tool a deny rule took away) and from the result's permission_denials (a
// denied command), once each, and so are writes the sandbox refused
// (EROFS); a tool that ran and failed otherwise is no denial.
func TestStreamSeesDenials(t *testing.T) {
	w := newStreamWatch(nil, nil)
	use := func(id, name, input string) string {
		return `{"type":"assistant","message":{"id":"m-` + id + `","model":"m","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}],"usage":{"input_tokens":1,"output_tokens":1}}}`
	}
	result := func(id string, isErr bool, content string) string {
		b, _ := json.Marshal(content)
		return `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":` + string(b) + `,"is_error":` + map[bool]string{true: "true", false: "false"}[isErr] + `,"tool_use_id":"` + id + `"}]}}`
	}
	for _, l := range []string{
		use("t1", "Edit", `{"file_path":"/w/a/f.txt","old_string":"f","new_string":"g"}`),
		result("t1", true, "<tool_use_error>Error: No such tool available: Edit. Edit is disabled for this session, in subagents as well as here.</tool_use_error>"),
		use("t2", "Bash", `{"command":"git commit -qm x","description":"d"}`),
		result("t2", true, "Permission to use Bash with command git commit -qm x has been denied."),
		use("t3", "Bash", `{"command":"false"}`),
		result("t3", true, "Exit code 1"),
		use("t4", "Bash", `{"command":"ls"}`),
		result("t4", false, "f.txt"),
		use("t5", "Bash", `{"command":"echo x > f.txt"}`),
		result("t5", true, "Exit code 1\n/bin/bash: line 1: f.txt: Read-only file system"),
		`{"type":"result","subtype":"success","permission_denials":[{"tool_name":"Bash","tool_use_id":"t2","tool_input":{"command":"git commit -qm x"}},{"tool_name":"Write","tool_use_id":"t9","tool_input":{"file_path":"/w/a/g.txt"}}]}`,
	} {
		w.line([]byte(l))
	}
	var got []string
	for _, d := range w.deniedCalls() {
		got = append(got, d.String())
	}
	want := []string{"Edit (/w/a/f.txt)", "Bash (git commit -qm x)", "Bash (echo x > f.txt) by the sandbox", "Write (/w/a/g.txt)"}
	if !slices.Equal(got, want) {
		t.Errorf("denials %q, want %q", got, want)
	}
}
