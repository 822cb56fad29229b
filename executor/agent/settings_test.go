package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// TestDecodeSettingsWithoutOwn: a kind whose adapter has no settings of its
// own takes the common attributes only: another attribute is refused on
// its line, and its agents have no settings; the built-in agent of a kind
// the registry lacks is left undecoded (its sessions fail naming the kind).
func TestDecodeSettingsWithoutOwn(t *testing.T) {
	reg := NewRegistry(&recorder{kind: "claude"}, &recorder{kind: "codex"})
	load := func(src string) (*spec.Config, hcl.Diagnostics) {
		file := filepath.Join(t.TempDir(), "wave.hcl")
		os.WriteFile(file, []byte(src), 0o644)
		return spec.NewLoader().LoadFile(file, spec.Options{AgentKinds: reg.Kinds(), AgentSettings: reg.DecodeSettings})
	}
	head := "wave \"w\" {}\nrepo \"api\" {\n  path = \".\"\n}\n"
	_, diags := load(head + "agent \"other\" {\n  kind = \"codex\"\n  permission_mode = \"plan\"\n}\n")
	found := false
	for _, d := range diags {
		if d.Summary == "Unsupported argument" && strings.Contains(d.Detail, `"permission_mode" is not expected here`) && d.Subject != nil && d.Subject.Start.Line == 7 {
			found = true
		}
	}
	if !found {
		t.Errorf("no Unsupported argument at line 7 in:\n%s", diags.Error())
	}
	cfg, diags := load(head + "agent \"other\" {\n  kind = \"codex\"\n  command = \"/opt/codex\"\n  sandbox = false\n  fallback_model = \"m\"\n}\n")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if a := cfg.Agent("other"); a.Settings != nil || a.Command != "/opt/codex" || !a.NoSandbox || a.FallbackModel != "m" {
		t.Errorf("agent %+v", a)
	}
	if s, d := NewRegistry().DecodeSettings("claude", nil, nil); s != nil || d != nil {
		t.Errorf("the built-in agent of a kind with no adapter: %v, %v", s, d)
	}
	if _, d := NewRegistry().DecodeSettings("codex", hcl.EmptyBody(), nil); !d.HasErrors() || d[0].Summary != "Unknown agent kind" {
		t.Errorf("a body of a kind with no adapter: %v", d)
	}
}
