package spec

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestAgentKind checks an agent block's kind: claude by default; a kind
// the caller registered; an unknown kind, refused at its value with a
// suggestion. (A kind's own attributes are its adapter's: the adapters'
// tests check them.)
func TestAgentKind(t *testing.T) {
	const lots = "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  agent = agent.other\n}\n"
	for _, tc := range []struct {
		name, block string
		kinds       []string
		want        *Agent // Name, Kind and Command compared
		summary     string
		detail      string
		line        int
	}{
		{name: "default kind", block: "agent \"other\" {\n  command = \"claude-beta\"\n  permission_mode = \"plan\"\n}\n",
			want: &Agent{Name: "other", Kind: "claude", Command: "claude-beta"}},
		{name: "claude written out", block: "agent \"other\" {\n  kind = \"claude\"\n  max_retries = 1\n}\n",
			want: &Agent{Name: "other", Kind: "claude", Command: "claude"}},
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
			got := &Agent{Name: a.Name, Kind: a.Kind, Command: a.Command}
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
	if a := cfg.Agent(BuiltinAgent); a.Kind != "codex" || a.Command != "codex" || a.Builtin || a.Body == nil {
		t.Errorf("redeclared agent %+v", a)
	}
}

// TestAgentDefaultCommand: an agent that sets no command runs its kind's
// adapter's default command (Options.AgentCommand), the built-in agent
// too; one that sets a command keeps it; with no AgentCommand, the kind's
// name.
func TestAgentDefaultCommand(t *testing.T) {
	commands := map[string]string{"claude": "claude-code", "gem": "gemini-cli"}
	opts := Options{AgentKinds: []string{"claude", "gem"}, AgentCommand: func(kind string) string { return commands[kind] }}
	cfg, diags := load(t, head+"agent \"g\" {\n  kind = \"gem\"\n}\nagent \"own\" {\n  kind = \"gem\"\n  command = \"/opt/gem\"\n}\nagent \"c\" {}\n", opts)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for name, want := range map[string]string{"g": "gemini-cli", "own": "/opt/gem", "c": "claude-code", BuiltinAgent: "claude-code"} {
		if a := cfg.Agent(name); a == nil || a.Command != want {
			t.Errorf("agent %s: %+v, want command %q", name, a, want)
		}
	}
	cfg, diags = load(t, head+"agent \"g\" {\n  kind = \"gem\"\n}\n", Options{AgentKinds: []string{"claude", "gem"}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if a := cfg.Agent("g"); a.Command != "gem" {
		t.Errorf("agent g with no AgentCommand: %+v, want command \"gem\"", a)
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
	if cfg.Lot("own").FallbackModel != "opus" || cfg.Lot("defaults").FallbackModel != "haiku" || cfg.Agent("other").FallbackModel != "sonnet" {
		t.Errorf("own %q, defaults %q, agent %q", cfg.Lot("own").FallbackModel, cfg.Lot("defaults").FallbackModel, cfg.Agent("other").FallbackModel)
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

// fakeSettings are what TestAgentSettingsHook's decoder gives.
type fakeSettings struct{ attrs []string }

func (fakeSettings) SandboxBypass() string { return "" }

// TestAgentSettingsHook: spec reads the common attributes itself and hands
// the rest of each agent block to Options.AgentSettings (the built-in
// agent with no body), keeps what it gives as the agent's Settings and its
// diagnostics among the loader's; the kind's own attributes that derive
// from a sensitive value are in the agent's Sensitive fields.
func TestAgentSettingsHook(t *testing.T) {
	type call struct {
		kind  string
		attrs []string
	}
	var calls []call
	decode := func(kind string, body hcl.Body, ctx *hcl.EvalContext) (AgentSettings, hcl.Diagnostics) {
		c := call{kind: kind}
		if body != nil {
			attrs, _ := body.JustAttributes()
			for name := range attrs {
				c.attrs = append(c.attrs, name)
			}
			sort.Strings(c.attrs)
			if a := attrs["bad"]; a != nil {
				calls = append(calls, c)
				return fakeSettings{c.attrs}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Bad setting", Subject: a.Expr.Range().Ptr()}}
			}
		}
		calls = append(calls, c)
		return fakeSettings{c.attrs}, nil
	}
	src := head + "variable \"s\" {\n  sensitive = true\n  default = \"x\"\n}\n" +
		"agent \"other\" {\n  command = \"o\"\n  sandbox = false\n  fallback_model = \"haiku\"\n  own = \"${var.s}\"\n  plain = 1\n}\n"
	cfg, diags := load(t, src, Options{AgentSettings: decode})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := []call{{kind: "claude", attrs: []string{"own", "plain"}}, {kind: "claude"}}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("decoder calls %+v, want %+v (the block's own attributes, then the built-in agent with no body)", calls, want)
	}
	a := cfg.Agent("other")
	if s, ok := a.Settings.(fakeSettings); !ok || len(s.attrs) != 2 || a.Command != "o" || !a.NoSandbox || a.FallbackModel != "haiku" {
		t.Errorf("agent %+v", a)
	}
	if !a.Sensitive.Has("own") || a.Sensitive.Has("plain") {
		t.Errorf("sensitive fields %v: want own only", a.Sensitive)
	}
	if cfg.Agent(BuiltinAgent).Settings == nil {
		t.Error("the built-in agent has no settings")
	}
	calls = nil
	_, diags = load(t, head+"agent \"other\" {\n  bad = 1\n}\n", Options{AgentSettings: decode})
	if len(diags) != 1 || diags[0].Summary != "Bad setting" || diags[0].Subject.Start.Line != 8 {
		t.Errorf("the decoder's diagnostic: %v", diags)
	}
}
