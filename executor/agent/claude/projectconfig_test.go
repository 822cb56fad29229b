package claude

import (
	"slices"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// TestArgsProjectConfig: every session, new or resumed, write or
// read-only, sandboxed or not, loads the user's settings only, starts no
// MCP server but cadence's (none), and has its own folder as an --add-dir
// (its CLAUDE.md is read from there); the neighbours' folders follow.
// --mcp-config takes several values: the next argument is a flag.
func TestArgsProjectConfig(t *testing.T) {
	a := &spec.Agent{Name: "claude", Kind: "claude", Command: "claude", Settings: &Settings{PermissionMode: "acceptEdits", AllowedTools: []string{"Bash", "Edit"}}}
	for _, readOnly := range []bool{false, true} {
		for _, sandbox := range []*Sandbox{nil, {}} {
			for _, resume := range []bool{false, true} {
				s := agent.Session{Agent: a, Model: "opus", SessionID: "id", Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema(), ReadOnly: readOnly,
					Dir: t.TempDir(), AddDirs: []string{"/w/web"}}
				args, err := Args(s, resume, sandbox)
				if err != nil {
					t.Fatal(err)
				}
				what := func() string { return strings.Join(args, " ") }
				if got := argValue(args, "--setting-sources"); got != "user" {
					t.Errorf("--setting-sources %q: %s", got, what())
				}
				if got := argValue(args, "--mcp-config"); got != `{"mcpServers":{}}` {
					t.Errorf("--mcp-config %q: %s", got, what())
				}
				if i := slices.Index(args, "--mcp-config"); i < 0 || i+2 >= len(args) || !strings.HasPrefix(args[i+2], "--") {
					t.Errorf("--mcp-config is not followed by a flag: %s", what())
				}
				if !slices.Contains(args, "--strict-mcp-config") {
					t.Errorf("no --strict-mcp-config: %s", what())
				}
				var dirs []string
				for i, v := range args {
					if v == "--add-dir" && i+1 < len(args) {
						dirs = append(dirs, args[i+1])
					}
				}
				if want := []string{s.Dir, "/w/web"}; !slices.Equal(dirs, want) {
					t.Errorf("--add-dir %q, want %q", dirs, want)
				}
			}
		}
	}
}

// TestProjectConfig: the files the adapter names to the executor are
// those the CLI runs or takes rules from; CLAUDE.md, text, is not among
// them.
func TestProjectConfig(t *testing.T) {
	got := New().ProjectConfig()
	for _, want := range []string{".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".claude/hooks/", ".claude/skills/"} {
		if !slices.Contains(got, want) {
			t.Errorf("ProjectConfig lacks %s: %q", want, got)
		}
	}
	for _, text := range []string{"CLAUDE.md", ".claude/CLAUDE.md", ".claude/rules/"} {
		if slices.Contains(got, text) {
			t.Errorf("ProjectConfig has %s", text)
		}
	}
	got[0] = "x"
	if New().ProjectConfig()[0] == "x" {
		t.Error("ProjectConfig shares its list")
	}
}
