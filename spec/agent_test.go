package spec

import (
	"reflect"
	"strings"
	"testing"
)

// TestAgentKind checks an agent block's kind: claude by default, with its
// own attributes; a kind the caller registered, with the common attributes
// only; an unknown kind, refused at its value with a suggestion.
func TestAgentKind(t *testing.T) {
	const lots = "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  agent = agent.other\n}\n"
	for _, tc := range []struct {
		name, block string
		kinds       []string
		want        *Agent // Name, Kind, Command and Claude compared
		summary     string
		detail      string
		line        int
	}{
		{name: "default kind", block: "agent \"other\" {\n  command = \"claude-beta\"\n  permission_mode = \"plan\"\n}\n",
			want: &Agent{Name: "other", Kind: "claude", Command: "claude-beta", Claude: ClaudeAgent{PermissionMode: "plan",
				AllowedTools: []string{"Bash", "Edit", "Write"}, DisallowedTools: []string{"Agent", "Bash(git push:*)"}, MaxRetries: DefaultAgentMaxRetries}}},
		{name: "claude written out", block: "agent \"other\" {\n  kind = \"claude\"\n  max_retries = 1\n}\n",
			want: &Agent{Name: "other", Kind: "claude", Command: "claude", Claude: ClaudeAgent{PermissionMode: "acceptEdits",
				AllowedTools: []string{"Bash", "Edit", "Write"}, DisallowedTools: []string{"Agent", "Bash(git push:*)"}, MaxRetries: 1}}},
		{name: "registered kind", block: "agent \"other\" {\n  kind = \"codex\"\n}\n", kinds: []string{"claude", "codex"},
			want: &Agent{Name: "other", Kind: "codex", Command: "codex"}},
		{name: "registered kind with command", block: "agent \"other\" {\n  kind = \"codex\"\n  command = \"/opt/codex\"\n}\n", kinds: []string{"claude", "codex"},
			want: &Agent{Name: "other", Kind: "codex", Command: "/opt/codex"}},
		{name: "unknown kind", block: "agent \"other\" {\n  kind = \"claud\"\n}\n",
			summary: "Unknown agent kind", detail: `kinds are "claude". Did you mean "claude"?`, line: 8},
		{name: "unknown kind, no suggestion", block: "agent \"other\" {\n  kind = \"gemini\"\n}\n", kinds: []string{"claude", "codex"},
			summary: "Unknown agent kind", detail: `No agent adapter runs kind "gemini"; the kinds are "claude" or "codex".`, line: 8},
		{name: "kind registered by default only", block: "agent \"other\" {\n  kind = \"codex\"\n}\n",
			summary: "Unknown agent kind", detail: `kind "codex"`, line: 8},
		{name: "claude attribute on another kind", block: "agent \"other\" {\n  kind = \"codex\"\n  permission_mode = \"plan\"\n}\n", kinds: []string{"claude", "codex"},
			summary: "Unsupported argument", detail: `"permission_mode" is not expected here`, line: 9},
		{name: "kind not a string", block: "agent \"other\" {\n  kind = [\"claude\"]\n}\n",
			summary: "Incorrect attribute value type", detail: "string required", line: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := load(t, head+tc.block+lots, Options{AgentKinds: tc.kinds})
			if tc.want == nil {
				for _, d := range diags {
					if d.Summary == tc.summary && strings.Contains(d.Detail, tc.detail) && d.Subject != nil && d.Subject.Start.Line == tc.line {
						return
					}
				}
				t.Fatalf("no %q diagnostic with %q at line %d in:\n%s", tc.summary, tc.detail, tc.line, diags.Error())
			}
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			a := cfg.Agent("other")
			got := &Agent{Name: a.Name, Kind: a.Kind, Command: a.Command, Claude: a.Claude}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("agent = %+v, want %+v", got, tc.want)
			}
			if cfg.Lots[0].Agent != a {
				t.Error("the lot does not run with its agent")
			}
		})
	}
}

// TestBuiltinAgentKind checks that the built-in agent is of kind claude,
// and that a block of its name with another kind replaces its settings.
func TestBuiltinAgentKind(t *testing.T) {
	cfg, diags := load(t, head, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if a := cfg.Agent(BuiltinAgent); a.Kind != AgentKindClaude || a.Command != "claude" || !a.Builtin {
		t.Errorf("built-in agent %+v", a)
	}
	cfg, diags = load(t, head+"agent \"claude\" {\n  kind = \"codex\"\n}\n", Options{AgentKinds: []string{"claude", "codex"}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if a := cfg.Agent(BuiltinAgent); a.Kind != "codex" || a.Command != "codex" || a.Builtin || a.Claude.PermissionMode != "" {
		t.Errorf("redeclared agent %+v", a)
	}
}

// TestFallbackModel: a lot's fallback_model is its own, else the defaults',
// else its agent's; an empty one is refused at its value, and a command lot
// takes none.
func TestFallbackModel(t *testing.T) {
	src := head + `defaults {
  fallback_model = "haiku"
}
agent "other" {
  fallback_model = "sonnet"
}
lot "own" {
  repo = repo.api
  brief = "x"
  fallback_model = "opus"
}
lot "defaults" {
  repo = repo.api
  brief = "x"
}
`
	cfg, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if cfg.Lot("own").FallbackModel != "opus" || cfg.Lot("defaults").FallbackModel != "haiku" || cfg.Agent("other").Claude.FallbackModel != "sonnet" {
		t.Errorf("own %q, defaults %q, agent %q", cfg.Lot("own").FallbackModel, cfg.Lot("defaults").FallbackModel, cfg.Agent("other").Claude.FallbackModel)
	}
	cfg, diags = load(t, head+"agent \"other\" {\n  fallback_model = \"sonnet\"\n}\nlot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  agent = agent.other\n}\nlot \"b\" {\n  repo = repo.api\n  brief = \"x\"\n}\n", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if cfg.Lot("a").FallbackModel != "sonnet" || cfg.Lot("b").FallbackModel != "" {
		t.Errorf("from the agent: a %q, b %q", cfg.Lot("a").FallbackModel, cfg.Lot("b").FallbackModel)
	}
	for _, tc := range []struct {
		src, summary string
		line         int
	}{
		{head + "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  fallback_model = \" \"\n}\n", "Empty fallback_model", 10},
		{head + "agent \"claude\" {\n  fallback_model = \"\"\n}\nlot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n}\n", "Empty fallback_model", 8},
		{head + "lot \"a\" {\n  repo = repo.api\n  run = \"true\"\n  fallback_model = \"sonnet\"\n}\n", "", 10},
	} {
		_, diags := load(t, tc.src, Options{})
		found := false
		for _, d := range diags {
			if (tc.summary == "" || d.Summary == tc.summary) && d.Subject != nil && d.Subject.Start.Line == tc.line {
				found = true
			}
		}
		if !found {
			t.Errorf("no %q error at line %d in:\n%s", tc.summary, tc.line, diags.Error())
		}
	}
}
