package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvVarsPrecedence: values from the environment (Options.EnvVars, the
// CLI's CADENCE_VAR_name) beat the defaults and lose to var files and -var;
// typed variables parse them as -var does; undeclared names are ignored.
func TestEnvVarsPrecedence(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "vars.hcl")
	if err := os.WriteFile(vf, []byte(`model = "opus"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `variable "model" { default = "sonnet" }
variable "passes" {
  type    = number
  default = 1
}
wave "w" {}
repo "api" { path = "." }
lot "a" {
  repo       = repo.api
  brief      = "do it"
  model      = var.model
  fix_passes = var.passes
}
`
	file := filepath.Join(dir, "wave.hcl")
	env := map[string]string{"model": "haiku", "passes": "4", "undeclared": "x"}
	tests := []struct {
		name   string
		opts   Options
		model  string
		passes int
	}{
		{"defaults", Options{}, "sonnet", 1},
		{"environment over defaults", Options{EnvVars: env}, "haiku", 4},
		{"var file over environment", Options{EnvVars: env, VarFiles: []string{vf}}, "opus", 4},
		{"-var over environment", Options{EnvVars: env, Vars: []string{"model=fable", "passes=2"}}, "fable", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := NewLoader().LoadBytes([]byte(src), file, tt.opts)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if a := cfg.Lot("a"); a.Model != tt.model || a.FixPasses != tt.passes {
				t.Errorf("model %q passes %d, want %q %d", a.Model, a.FixPasses, tt.model, tt.passes)
			}
		})
	}
	_, diags := NewLoader().LoadBytes([]byte(src), file, Options{EnvVars: map[string]string{"passes": "many"}})
	if !strings.Contains(diags.Error(), "CADENCE_VAR_passes") {
		t.Errorf("bad typed value: %v", diags)
	}
}
