package planner

import (
	"reflect"
	"strings"
	"testing"
)

func TestSavedPlanStale(t *testing.T) {
	s := &SavedPlan{
		WaveFile: "/w/wave.hcl", WaveDigest: "sha256:w1", StateDigest: "",
		BaseSHAs:       map[string]string{"api": "aaaaaaaaaaaaaaaa"},
		Files:          map[string]string{"/w/cmd.sh": "sha256:f1"},
		VarFileDigests: map[string]string{"/w/v.hcl": "sha256:v1", "/w/wave.vars.hcl": ""},
		Templates:      "/w/tpl", TemplatesDigest: "sha256:t1",
		Env:            map[string]string{"TOKEN": "sha256:e1", "GONE": ""},
		Vars:           []string{"n=1", "n=2", "m=x"},
		ToolchainFiles: map[string]string{"api/.nvmrc": "sha256:n1", "api/mise.toml": ""},
		Toolchains:     map[string]SavedToolchain{"api": {Resolved: "node v22.1.0 from .nvmrc", Digest: "hmac-sha256:d1"}},
	}
	fresh := Inputs{
		WaveDigest: "sha256:w1", BaseSHAs: map[string]string{"api": "aaaaaaaaaaaaaaaa"},
		Files: map[string]string{"/w/cmd.sh": "sha256:f1"}, VarFiles: map[string]string{"/w/v.hcl": "sha256:v1"},
		TemplatesDigest: "sha256:t1", Env: map[string]string{"TOKEN": "sha256:e1", "GONE": ""},
		ToolchainFiles: map[string]string{"api/.nvmrc": "sha256:n1", "api/mise.toml": ""},
		Toolchains:     map[string]SavedToolchain{"api": {Resolved: "node v22.1.0 from .nvmrc", Digest: "hmac-sha256:d1"}},
	}
	tests := []struct {
		name   string
		change func(in *Inputs)
		want   []string
	}{
		{"fresh", func(*Inputs) {}, nil},
		{"same -var given again", func(in *Inputs) { in.Vars = []string{"n=2"} }, nil},
		{"wave", func(in *Inputs) { in.WaveDigest = "sha256:w2" },
			[]string{"the wave file /w/wave.hcl changed since the plan (digest w1 → w2)"}},
		{"file()", func(in *Inputs) { in.Files = map[string]string{} },
			[]string{"file cmd.sh changed since the plan (digest f1 → none)"}},
		{"var file", func(in *Inputs) { in.VarFiles = map[string]string{"/w/v.hcl": "sha256:v2"} },
			[]string{"var file v.hcl changed since the plan (digest v1 → v2)"}},
		{"var file gone", func(in *Inputs) { in.VarFiles = map[string]string{} },
			[]string{"var file v.hcl is gone since the plan (digest v1 → none)"}},
		{"auto var file appeared", func(in *Inputs) {
			in.VarFiles = map[string]string{"/w/v.hcl": "sha256:v1", "/w/wave.vars.hcl": "sha256:a1"}
		}, []string{"var file wave.vars.hcl appeared since the plan (digest none → a1)"}},
		{"templates", func(in *Inputs) { in.TemplatesDigest = "sha256:t2" },
			[]string{"the templates folder tpl changed since the plan (digest t1 → t2)"}},
		{"-var", func(in *Inputs) { in.Vars = []string{"n=3", "k=1"} },
			[]string{`-var k changed (not set → "1")`, `-var n changed ("2" → "3")`}},
		{"sensitive -var", func(in *Inputs) {
			in.Vars = []string{"n=3"}
			in.Sensitive = func(name string) bool { return name == "n" }
		}, []string{`-var n changed (digest d4735e3a265e → 4e07408562be; the variable is sensitive)`}},
		{"env", func(in *Inputs) { in.Env = map[string]string{"TOKEN": "sha256:e2", "GONE": "sha256:e3"} },
			[]string{`env("GONE") changed since the plan (digest unset → e3; values are not shown)`,
				`env("TOKEN") changed since the plan (digest e1 → e2; values are not shown)`}},
		{"state", func(in *Inputs) { in.StateDigest = "sha256:0123456789abcdef" },
			[]string{"the state file changed since the plan (another apply ran: digest none → 0123456789ab)"}},
		{"base moved", func(in *Inputs) { in.BaseSHAs = map[string]string{"api": "bbbbbbbbbbbbbbbbbb"} },
			[]string{"the base of repo api moved from aaaaaaaaaaaa to bbbbbbbbbbbb"}},
		{"base gone", func(in *Inputs) { in.BaseSHAs = nil },
			[]string{"the base of repo api is gone (was aaaaaaaaaaaa)"}},
		{"toolchain file", func(in *Inputs) {
			in.ToolchainFiles = map[string]string{"api/.nvmrc": "sha256:n2", "api/mise.toml": "sha256:m1"}
		}, []string{"toolchain file api/.nvmrc changed since the plan (digest n1 → n2)",
			"toolchain file api/mise.toml appeared since the plan (digest none → m1)"}},
		{"toolchain file gone", func(in *Inputs) { in.ToolchainFiles = map[string]string{"api/mise.toml": ""} },
			[]string{"toolchain file api/.nvmrc is gone since the plan (digest n1 → none)"}},
		{"toolchain resolved", func(in *Inputs) {
			in.Toolchains = map[string]SavedToolchain{"api": {Resolved: "node v22.22.3 from .nvmrc", Digest: "hmac-sha256:d2"}}
		}, []string{"the toolchain of repo api changed since the plan (node v22.1.0 from .nvmrc → node v22.22.3 from .nvmrc)"}},
		{"toolchain variables", func(in *Inputs) {
			in.Toolchains = map[string]SavedToolchain{"api": {Resolved: "node v22.1.0 from .nvmrc", Digest: "hmac-sha256:d3"}}
		}, []string{"the toolchain of repo api changed since the plan (node v22.1.0 from .nvmrc: its folders or variables differ)"}},
		{"toolchain not inspected now", func(in *Inputs) { in.Toolchains = nil }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fresh
			tt.change(&in)
			if got := s.Stale(in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Stale = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStaleCopyFile: a saved plan is stale once a file a copy attribute
// brings into the worktrees changed or went away.
func TestStaleCopyFile(t *testing.T) {
	s := &SavedPlan{WaveFile: "/w/wave.hcl", CopyFiles: map[string]string{"app/.env": "sha256:aaaa", "app/k": "sha256:cccc"}}
	why := s.Stale(Inputs{CopyFiles: map[string]string{"app/.env": "sha256:bbbb", "app/k": "sha256:cccc"}})
	if len(why) != 1 || !strings.Contains(why[0], "copied file app/.env changed since the plan") {
		t.Errorf("Stale = %q", why)
	}
	if why := s.Stale(Inputs{CopyFiles: map[string]string{"app/.env": "", "app/k": "sha256:cccc"}}); len(why) != 1 {
		t.Errorf("a copied file gone: Stale = %q", why)
	}
}
