package spec

import (
	"os"
	"path/filepath"
	"slices"
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

// TestSandboxWritableAttribute: sandbox_writable on a repo and on a lot
// names folders relative to the wave file's folder (or absolute); a lot's
// StepWritable is its own then its repositories'. A folder that does not
// exist, is a file, holds or lies inside a repository's checkout or git
// dir, or lies inside the wave's .cadence folder is an error at the
// attribute's line.
func TestSandboxWritableAttribute(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"app/.git", "out", "cache", ".cadence/w", "sep/app2", "sep/app2.git"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sep/app2/.git"), []byte("gitdir: ../app2.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wave := func(repoW, lotW string) string {
		return "wave \"w\" {}\nrepo \"app\" {\n  path = \"app\"\n  sandbox_writable = " + repoW +
			"\n}\nrepo \"app2\" {\n  path = \"sep/app2\"\n}\nlot \"a\" {\n  repo = repo.app\n  run = \"true\"\n  sandbox_writable = " + lotW + "\n}\n"
	}
	file := filepath.Join(dir, "wave.hcl")
	cfg, diags := NewLoader().LoadBytes([]byte(wave(`["out"]`, `["cache", "`+filepath.Join(dir, "out")+`"]`)), file, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []string{filepath.Join(dir, "cache"), filepath.Join(dir, "out")}
	if got := cfg.Lot("a").StepWritable(); !slices.Equal(got, want) {
		t.Errorf("StepWritable %q, want %q", got, want)
	}
	for _, c := range []struct{ repoW, lotW, want string }{
		{`["missing"]`, `[]`, "does not exist"},
		{`[]`, `["file"]`, "is not a folder"},
		{`["."]`, `[]`, `holds repo "app"'s folder (your checkout)`},
		{`[]`, `["app/src/.."]`, `holds repo "app"'s folder`},
		{`["app/.git"]`, `[]`, `is inside repo "app"'s folder`},
		{`[]`, `["sep/app2.git"]`, `holds repo "app2"'s git dir`},
		{`[".cadence/w"]`, `[]`, "inside the wave's .cadence folder"},
		{`"out"`, `[]`, "list of strings"},
	} {
		_, diags := NewLoader().LoadBytes([]byte(wave(c.repoW, c.lotW)), file, Options{})
		line := 4
		if c.repoW == `[]` {
			line = 12
		}
		if !diags.HasErrors() || !strings.Contains(diags.Error(), c.want) || diags[0].Subject == nil || diags[0].Subject.Start.Line != line {
			t.Errorf("repo %s, lot %s: %v, want an error at line %d saying %q", c.repoW, c.lotW, diags, line, c.want)
		}
	}
}
