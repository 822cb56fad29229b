package spec

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaKey checks that a *.hcl.json wave file may name its JSON
// Schema with a top-level "$schema" (any value, never evaluated), and that
// another unknown top-level key is still an error.
func TestSchemaKey(t *testing.T) {
	for _, tc := range []struct {
		name, doc, err string
	}{
		{"relative path", `{"$schema": "../../schemas/wave.schema.json", "wave": {"w": {}}, "lot": {"a": {"run": "true"}}}`, ""},
		{"URL", `{"$schema": "https://cadence.run/schemas/wave.schema.json", "wave": {"w": {}}}`, ""},
		{"after the blocks", `{"wave": {"w": {}}, "$schema": "wave.schema.json"}`, ""},
		{"a template is not evaluated", `{"$schema": "${nope}", "wave": {"w": {}}}`, ""},
		{"another key", `{"$schemas": "x", "wave": {"w": {}}}`, `No argument or block type is named "$schemas"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := NewLoader().LoadBytes([]byte(tc.doc), filepath.Join(t.TempDir(), "wave.hcl.json"), Options{})
			if tc.err == "" {
				if diags.HasErrors() {
					t.Fatal(diags.Error())
				}
				if cfg.Wave.Name != "w" {
					t.Errorf("wave %q", cfg.Wave.Name)
				}
				return
			}
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.err) {
				t.Errorf("diagnostics %v, want %q", diags, tc.err)
			}
		})
	}
}
