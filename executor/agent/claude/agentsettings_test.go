package claude

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

const settingsHead = "wave \"w\" {}\nrepo \"api\" {\n  path = \".\"\n}\n"

// loadWith loads src as a wave file with the registry of this adapter
// deciding agents' settings, as the CLI does.
func loadWith(t *testing.T, src string) (*spec.Config, hcl.Diagnostics) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "wave.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry(New())
	return spec.NewLoader().LoadFile(file, spec.Options{AgentKinds: reg.Kinds(), AgentSettings: reg.DecodeSettings})
}

// TestDecodeSettings: an agent of kind claude starts from DefaultSettings
// (the built-in agent's) and takes what its block sets; the common
// attributes stay spec's.
func TestDecodeSettings(t *testing.T) {
	lots := "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  agent = agent.other\n}\n"
	defaults := DefaultSettings()
	for _, tc := range []struct {
		name, block string
		want        Settings
		command     string
	}{
		{"default kind", "agent \"other\" {\n  command = \"claude-beta\"\n  permission_mode = \"plan\"\n}\n",
			Settings{PermissionMode: "plan", AllowedTools: []string{"Bash", "Edit", "Write"}, DisallowedTools: []string{"Agent", "Bash(git push:*)"}, MaxRetries: DefaultMaxRetries}, "claude-beta"},
		{"claude written out", "agent \"other\" {\n  kind = \"claude\"\n  max_retries = 1\n}\n",
			Settings{PermissionMode: "acceptEdits", AllowedTools: []string{"Bash", "Edit", "Write"}, DisallowedTools: []string{"Agent", "Bash(git push:*)"}, MaxRetries: 1}, "claude"},
		{"every attribute", "variable \"p\" {\n  default = \"Be brief.\"\n}\nagent \"other\" {\n  permission_mode = \"dontAsk\"\n  allowed_tools = [\"Read\"]\n  disallowed_tools = []\n  append_system_prompt = var.p\n  max_retries = 0\n}\n",
			Settings{PermissionMode: "dontAsk", AllowedTools: []string{"Read"}, DisallowedTools: nil, AppendSystemPrompt: "Be brief.", MaxRetries: 0}, "claude"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := loadWith(t, settingsHead+tc.block+lots)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			a := cfg.Agent("other")
			got, ok := a.Settings.(*Settings)
			if !ok {
				t.Fatalf("settings %T", a.Settings)
			}
			if len(got.DisallowedTools) == 0 {
				got.DisallowedTools = nil
			}
			if !reflect.DeepEqual(*got, tc.want) || a.Command != tc.command || settingsOf(a) != got {
				t.Errorf("agent %s: settings %+v, want %+v", a.Command, *got, tc.want)
			}
			if b, ok := cfg.Agent(spec.BuiltinAgent).Settings.(*Settings); !ok || !reflect.DeepEqual(b, defaults) {
				t.Errorf("built-in agent's settings %+v, want the defaults", cfg.Agent(spec.BuiltinAgent).Settings)
			}
		})
	}
	if s := settingsOf(&spec.Agent{Kind: Kind}); !reflect.DeepEqual(s, defaults) {
		t.Errorf("an agent with no decoded settings runs with %+v", s)
	}
}

// TestDecodeSettingsDiagnostics: the adapter's attributes are judged with
// the wave file's rules, each error on the value's range (file and line,
// so the snippet): the summaries and details the wave's own attributes
// give.
func TestDecodeSettingsDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name, block, summary, detail string
		line                         int
	}{
		{"permission mode", "agent \"other\" {\n  permission_mode = \"plann\"\n}\n", "Invalid value", `"permission_mode" must be one of "default", "acceptEdits", "plan", "auto", "dontAsk" or "bypassPermissions"; got "plann". Did you mean "plan"?`, 6},
		{"unknown attribute", "agent \"other\" {\n  permision_mode = \"plan\"\n}\n", "Unsupported argument", `An argument named "permision_mode" is not expected here. Did you mean "permission_mode"?`, 6},
		{"not a list", "agent \"other\" {\n  allowed_tools = \"Bash\"\n}\n", "Incorrect attribute value type", `Inappropriate value for attribute "allowed_tools": a list of strings required, but got a string.`, 6},
		{"null in a list", "agent \"other\" {\n  disallowed_tools = [null]\n}\n", "Invalid list element", `The list "disallowed_tools" may not contain null.`, 6},
		{"fractional retries", "agent \"claude\" {\n  max_retries = 1.5\n}\n", "Invalid value", `"max_retries" must be a whole number.`, 6},
		{"sensitive permission mode", "variable \"m\" {\n  sensitive = true\n  default = \"plan\"\n}\nagent \"other\" {\n  permission_mode = var.m\n}\n", "Sensitive value not allowed", `"permission_mode" cannot be derived from a sensitive value`, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := loadWith(t, settingsHead+tc.block)
			for _, d := range diags {
				if d.Summary == tc.summary && strings.Contains(d.Detail, tc.detail) && d.Subject != nil && d.Subject.Start.Line == tc.line &&
					strings.HasSuffix(d.Subject.Filename, "wave.hcl") {
					return
				}
			}
			t.Fatalf("no %q diagnostic with %q at wave.hcl:%d in:\n%s", tc.summary, tc.detail, tc.line, diags.Error())
		})
	}
}

// TestSettingsSensitive: append_system_prompt may derive from a sensitive
// value (a plan never shows it) and is then among the agent's sensitive
// fields.
func TestSettingsSensitive(t *testing.T) {
	cfg, diags := loadWith(t, settingsHead+"variable \"s\" {\n  sensitive = true\n  default = \"secret\"\n}\nagent \"claude\" {\n  append_system_prompt = \"Use ${var.s}.\"\n}\n")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	a := cfg.Agent("claude")
	if !a.Sensitive.Has("append_system_prompt") || settingsOf(a).AppendSystemPrompt != "Use secret." {
		t.Errorf("sensitive %v, prompt %q", a.Sensitive, settingsOf(a).AppendSystemPrompt)
	}
}

// TestSandboxBypass: bypassPermissions is the one permission mode whose
// file tools write outside the sandbox; the plan and the guards ask the
// settings, not the mode.
func TestSandboxBypass(t *testing.T) {
	for _, m := range PermissionModes {
		got := (&Settings{PermissionMode: m}).SandboxBypass()
		if (m == "bypassPermissions") != (got != "") {
			t.Errorf("%s: SandboxBypass %q", m, got)
		}
	}
	a := &spec.Agent{Settings: &Settings{PermissionMode: "bypassPermissions"}}
	if !strings.HasPrefix(a.SandboxBypass(), `permission_mode = "bypassPermissions" (`) {
		t.Errorf("agent's SandboxBypass %q", a.SandboxBypass())
	}
}

// TestAttributesDocumented: every attribute the adapter decodes is
// described in its kind's table (its hover in the language server, its
// Doc), the table names no other, and none is one of the
// common attributes spec reads.
func TestAttributesDocumented(t *testing.T) {
	common := map[string]bool{}
	for _, n := range spec.AgentCommon() {
		common[n] = true
	}
	for _, a := range New().Attributes() {
		if a.Doc.Meaning == "" {
			t.Errorf("%s has no description in its kind's table of docs/wave-file.md", a.Name)
		}
		if common[a.Name] {
			t.Errorf("%s is a common attribute", a.Name)
		}
	}
	if len(attributeDocs) != len(New().Attributes()) {
		t.Errorf("the kind's table documents %d attributes, the adapter decodes %d", len(attributeDocs), len(New().Attributes()))
	}
}
