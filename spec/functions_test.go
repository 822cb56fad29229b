package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestEnvFunction: env() reads through Options.LookupEnv only, falls back
// to its default, and every answer is recorded in Config.Env.
func TestEnvFunction(t *testing.T) {
	lookup := func(name string) (string, bool) {
		v, ok := map[string]string{"MODEL": "opus", "EMPTY": ""}[name]
		return v, ok
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "brief.tpl"), []byte(`Use ${env("TPL_VAR", "tpl-default")}.`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `wave "w" {}
repo "r" {
  path = "."
}
lot "a" {
  repo  = repo.r
  brief = templatefile("brief.tpl", {})
  model = env("MODEL")
  title = "${env("EMPTY", "x")}-${env("UNSET", "fallback")}-${env("UNSET2")}"
}
`
	cfg, diags := NewLoader().LoadBytes([]byte(src), filepath.Join(dir, "wave.hcl"), Options{LookupEnv: lookup})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	a := cfg.Lot("a")
	if a.Model != "opus" || a.Title != "-fallback-" || a.Brief != "Use tpl-default." {
		t.Errorf("lot = model %q title %q brief %q", a.Model, a.Title, a.Brief)
	}
	want := map[string]EnvValue{
		"MODEL": {Value: "opus", Set: true}, "EMPTY": {Set: true},
		"UNSET": {}, "UNSET2": {}, "TPL_VAR": {},
	}
	if !reflect.DeepEqual(cfg.Env, want) {
		t.Errorf("Config.Env = %+v, want %+v", cfg.Env, want)
	}
}

// TestEnvFunctionWithoutLookup: without a lookup no variable is set, even
// one the process has: spec never reads the environment itself.
func TestEnvFunctionWithoutLookup(t *testing.T) {
	t.Setenv("CADENCE_SPEC_LEAK", "leaked")
	cfg, diags := load(t, `wave "w" {}
lot "a" {
  run   = "true"
  title = env("CADENCE_SPEC_LEAK", "none")
}
`, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := cfg.Lot("a").Title; got != "none" {
		t.Errorf("title = %q", got)
	}
	if got := cfg.Env["CADENCE_SPEC_LEAK"]; got.Set {
		t.Errorf("recorded %+v", got)
	}
}
