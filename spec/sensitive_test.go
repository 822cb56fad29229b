package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestSensitive: env() values and sensitive variables mark every attribute
// derived from them (through interpolation, functions, locals and the
// defaults block); the Go values stay the real ones.
func TestSensitive(t *testing.T) {
	lookup := func(name string) (string, bool) { return map[string]string{"SECRET": "s3cret"}[name], name == "SECRET" }
	cfg, diags := load(t, `wave "w" {}
variable "token" {
  sensitive = true
  default   = "tok"
}
variable "plain" {
  default = "open"
}
locals {
  derived = upper(var.token)
}
defaults {
  model = env("MODEL", "opus")
}
repo "r" {
  path = "."
  test = "make test TOKEN=${var.token}"
}
lot "a" {
  repo  = repo.r
  title = env("SECRET")
  brief = "use ${local.derived}"
}
lot "b" {
  repo  = repo.r
  title = var.plain
  brief = "plain"
  model = "sonnet"
}
lot "c" {
  run   = "echo ${var.token}"
}
`, Options{LookupEnv: lookup})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	a, b, c := cfg.Lot("a"), cfg.Lot("b"), cfg.Lot("c")
	if a.Title != "s3cret" || a.Brief != "use TOK" || c.Run != "echo tok" || a.Model != "opus" {
		t.Errorf("values: %q %q %q %q", a.Title, a.Brief, c.Run, a.Model)
	}
	for _, x := range []struct {
		got, want Fields
	}{
		{a.Sensitive, Fields{"title": true, "brief": true, "model": true}},
		{b.Sensitive, nil},
		{c.Sensitive, Fields{"run": true}},
		{cfg.Repo("r").Sensitive, Fields{"test": true}},
	} {
		if !reflect.DeepEqual(x.got, x.want) {
			t.Errorf("sensitive = %v, want %v", x.got, x.want)
		}
	}
	if !reflect.DeepEqual(cfg.SensitiveVars, map[string]bool{"token": true}) {
		t.Errorf("SensitiveVars = %v", cfg.SensitiveVars)
	}
	if got := a.Sensitive.Show("title", a.Title); got != Redacted {
		t.Errorf("Show = %q", got)
	}
}

// TestSensitiveInvalid: sensitive must be a bool.
func TestSensitiveInvalid(t *testing.T) {
	_, diags := load(t, `wave "w" {}
variable "x" {
  sensitive = "maybe"
  default   = "v"
}
`, Options{})
	if !diags.HasErrors() {
		t.Fatal("sensitive = \"maybe\" accepted")
	}
}

// TestSensitiveNotQuoted: a diagnostic about a sensitive value does not
// quote it.
func TestSensitiveNotQuoted(t *testing.T) {
	lookup := func(string) (string, bool) { return "hunter2", true }
	for _, attr := range []string{`on_conflict = env("X")`, `budget = env("X")`, `timeout = env("X")`, `fix_passes = -length(env("X"))`} {
		_, diags := load(t, `wave "w" {}
repo "r" {
  path = "."
}
lot "a" {
  repo  = repo.r
  brief = "b"
  `+attr+`
}
`, Options{LookupEnv: lookup})
		if !diags.HasErrors() || strings.Contains(diags.Error(), "hunter2") || strings.Contains(diags.Error(), "-7") {
			t.Errorf("%s: %v", attr, diags)
		}
	}
}

// TestLookupOnlyNamed: loading asks LookupEnv for the names the wave file
// passes to env() and no other (plan -offline in CI reads no more of the
// runner's environment), however the names are computed.
func TestLookupOnlyNamed(t *testing.T) {
	var asked []string
	lookup := func(name string) (string, bool) {
		asked = append(asked, name)
		return "v", true
	}
	_, diags := load(t, `wave "w" {}
locals {
  n = "B"
}
lot "a" {
  run   = "echo ${env("A")}"
  title = env(local.n)
}
`, Options{LookupEnv: lookup})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	sort.Strings(asked)
	if !reflect.DeepEqual(asked, []string{"A", "B"}) {
		t.Errorf("asked %v", asked)
	}
}

// TestSensitivePath: a file read through a sensitive path is sensitive, and
// a failure to read one does not quote the path.
func TestSensitivePath(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "brief.md"), []byte("the brief"), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) (string, bool) {
		return map[string]string{"OK": "brief.md", "BAD": "hunter2.md"}[name], true
	}
	src := `wave "w" {}
lot "a" {
  run   = "true"
  title = file(env("OK"))
  brief = templatefile(env("OK"), {})
}
`
	file := filepath.Join(dir, "wave.hcl")
	cfg, diags := NewLoader().LoadBytes([]byte(src), file, Options{LookupEnv: lookup})
	if !diags.HasErrors() {
		t.Fatal("a lot with brief and run accepted")
	}
	a := cfg.Lot("a")
	if a.Title != "the brief" || !a.Sensitive.Has("title") || !a.Sensitive.Has("brief") {
		t.Errorf("title %q sensitive %v", a.Title, a.Sensitive)
	}
	for _, call := range []string{`file(env("BAD"))`, `templatefile(env("BAD"), {})`} {
		_, diags = NewLoader().LoadBytes([]byte("wave \"w\" {}\nlot \"a\" {\n  run = \"true\"\n  title = "+call+"\n}\n"), file, Options{LookupEnv: lookup})
		if !diags.HasErrors() || strings.Contains(diags.Error(), "hunter2") {
			t.Errorf("%s: %v", call, diags)
		}
	}
}
