package spec

import (
	"strings"
	"testing"
)

// TestStepSandboxAttribute: `sandbox = false` on a repo turns the step
// sandbox off for every lot that uses it, on a lot for that lot; a value
// that is not a bool is an error at the attribute.
func TestStepSandboxAttribute(t *testing.T) {
	cfg, diags := load(t, `wave "w" {}
repo "machine" {
  path    = "."
  sandbox = false
}
repo "plain" {
  path = "."
}
lot "own" {
  repo    = repo.plain
  run     = "true"
  sandbox = false
}
lot "inherits" {
  repo = repo.machine
  run  = "true"
}
lot "boxed" {
  repo  = repo.plain
  brief = "x"
}
`, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for id, want := range map[string]string{"own": "lot own has sandbox = false", "inherits": "repo machine has sandbox = false", "boxed": ""} {
		if got := cfg.Lot(id).StepSandboxOff(); got != want {
			t.Errorf("lot %s: StepSandboxOff %q, want %q", id, got, want)
		}
	}
	_, diags = load(t, "wave \"w\" {}\nrepo \"r\" {\n  path = \".\"\n  sandbox = \"no\"\n}\nlot \"a\" {\n  repo = repo.r\n  run = \"true\"\n}\n", Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "bool") || diags[0].Subject == nil || diags[0].Subject.Start.Line != 4 {
		t.Errorf("sandbox = \"no\": %v, want an error at line 4 saying a bool", diags)
	}
}
