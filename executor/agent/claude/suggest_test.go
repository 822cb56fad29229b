package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/spec"
)

// TestAgentCommonAttributeTypoSuggests: a misspelt common attribute of an
// agent block (sandbox, command, fallback_model), which the adapter sees as
// an unknown attribute of its own body, gets the "Did you mean" every other
// unknown attribute gets (docs/wave-file.md, Errors: "unknown blocks and
// attributes (with the likely name)"), in native and JSON syntax alike.
func TestAgentCommonAttributeTypoSuggests(t *testing.T) {
	for _, tc := range []struct {
		name, block, want string
	}{
		{"sandbox", "agent \"other\" {\n  sandbx = false\n}\n", `An argument named "sandbx" is not expected here. Did you mean "sandbox"?`},
		{"command", "agent \"other\" {\n  comand = \"claude-beta\"\n}\n", `An argument named "comand" is not expected here. Did you mean "command"?`},
		{"fallback_model", "agent \"other\" {\n  fallback_modle = \"haiku\"\n}\n", `An argument named "fallback_modle" is not expected here. Did you mean "fallback_model"?`},
		{"kind's own still", "agent \"other\" {\n  max_retrie = 2\n}\n", `An argument named "max_retrie" is not expected here. Did you mean "max_retries"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := loadWith(t, settingsHead+tc.block)
			for _, d := range diags {
				if d.Summary == "Unsupported argument" && d.Detail == tc.want {
					return
				}
			}
			t.Fatalf("no diagnostic %q in:\n%s", tc.want, diags.Error())
		})
	}
	t.Run("json", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "wave.hcl.json")
		src := `{"wave": {"w": {}}, "agent": {"other": {"sandbx": false}}}`
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		reg := agent.NewRegistry(New())
		_, diags := spec.NewLoader().LoadFile(file, spec.Options{AgentKinds: reg.Kinds(), AgentSettings: reg.DecodeSettings})
		if !strings.Contains(diags.Error(), `No argument or block type is named "sandbx". Did you mean "sandbox"?`) {
			t.Fatalf("no suggestion of sandbox in:\n%s", diags.Error())
		}
	})
}
