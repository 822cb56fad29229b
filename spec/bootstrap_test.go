package spec

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestBootstrapPrecedence: a lot's worktree gets its repo's submodules,
// copy and setup, each attribute the lot writes replacing the repo's
// (a list is replaced, not merged); a neighbour repo keeps its own.
func TestBootstrapPrecedence(t *testing.T) {
	cfg, diags := load(t, `wave "w" {}
repo "r" {
  path       = "."
  submodules = false
  copy       = [".env", "./config//local.yml"]
  setup      = "npm ci\r\n"
}
repo "plain" {
  path = "."
}
lot "inherits" {
  repo  = repo.r
  brief = "x"
}
lot "own" {
  repo       = repo.r
  run        = "true"
  submodules = true
  copy       = ["secrets.json"]
  setup      = ""
}
lot "default" {
  repo  = repo.plain
  brief = "x"
}
`, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for _, x := range []struct {
		lot  string
		want Bootstrap
	}{
		{"inherits", Bootstrap{Submodules: SubmodulesOff, Copy: []string{".env", "config/local.yml"}, Setup: "npm ci\n"}},
		{"own", Bootstrap{Submodules: SubmodulesOn, Copy: []string{"secrets.json"}}},
		{"default", Bootstrap{}},
	} {
		if got := cfg.Lot(x.lot).Bootstrap; !reflect.DeepEqual(got, x.want) {
			t.Errorf("lot %s: Bootstrap = %+v, want %+v", x.lot, got, x.want)
		}
	}
	if got := cfg.Repo("r").Bootstrap.Copy; len(got) != 2 {
		t.Errorf("repo r's copy = %q", got)
	}
}

// TestBootstrapDiagnostics: a copy path outside the repository, inside
// its .git, absolute, repeated or not slash-separated is an error naming
// the path; submodules, copy or setup on a lot without a repo is one too.
func TestBootstrapDiagnostics(t *testing.T) {
	for _, x := range []struct {
		name, attrs, summary, detail string
	}{
		{"absolute", `copy = ["/etc/passwd"]`, "Invalid copy path", `"/etc/passwd" is absolute`},
		{"escapes", `copy = ["a/../../.env"]`, "Invalid copy path", `"a/../../.env" leaves the repository`},
		{"dot", `copy = ["./"]`, "Invalid copy path", "names the repository itself"},
		{"git dir", `copy = [".git/config"]`, "Invalid copy path", `".git/config" is inside .git`},
		{"empty", `copy = [""]`, "Invalid copy path", `"" is empty`},
		{"backslash", `copy = ["a\\b"]`, "Invalid copy path", "backslash"},
		{"twice", `copy = [".env", "./.env"]`, "Duplicate copy path", `lists ".env" twice`},
		{"not a list", `copy = ".env"`, "Incorrect attribute value type", "list of strings"},
		{"not a bool", `submodules = "yes"`, "Incorrect attribute value type", "a bool"},
	} {
		t.Run(x.name, func(t *testing.T) {
			_, diags := load(t, "wave \"w\" {}\nrepo \"r\" {\n  path = \".\"\n  "+x.attrs+"\n}\n", Options{})
			d := findDiag(diags, x.summary)
			if d == nil {
				t.Fatalf("no %q diagnostic in %v", x.summary, diags)
			}
			if !strings.Contains(d.Detail, x.detail) || d.Subject == nil || d.Subject.Start.Line != 4 {
				t.Errorf("diagnostic %q at %v, want it to say %q at line 4", d.Detail, d.Subject, x.detail)
			}
		})
	}
	_, diags := load(t, `wave "w" {}
lot "a" {
  run   = "true"
  setup = "make"
}
`, Options{})
	if d := findDiag(diags, "Not for a lot without a repo"); d == nil || !strings.Contains(d.Detail, `"setup"`) || d.Subject.Start.Line != 4 {
		t.Errorf("setup on a lot without a repo: %v", diags)
	}
}

// TestBootstrapJSONSyntax: the JSON syntax takes the same attributes.
func TestBootstrapJSONSyntax(t *testing.T) {
	cfg, diags := NewLoader().LoadBytes([]byte(`{"wave": {"w": {}},
 "repo": {"r": {"path": ".", "copy": [".env"], "setup": "make deps", "submodules": true}},
 "lot": {"a": {"repo": "repo.r", "brief": "x", "copy": []}}}`), filepath.Join(t.TempDir(), "wave.hcl.json"), Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := Bootstrap{Submodules: SubmodulesOn, Setup: "make deps"}
	if got := cfg.Lot("a").Bootstrap; !reflect.DeepEqual(got, want) {
		t.Errorf("Bootstrap = %+v, want %+v", got, want)
	}
}

// TestBootstrapSensitiveSetup: a setup taken from a repo whose setup is
// sensitive is sensitive in the lot too.
func TestBootstrapSensitiveSetup(t *testing.T) {
	cfg, diags := load(t, `wave "w" {}
repo "r" {
  path  = "."
  setup = "fetch ${env("SETUP_TOKEN")}"
}
lot "a" {
  repo  = repo.r
  brief = "x"
}
`, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if l := cfg.Lot("a"); !l.Sensitive.Has("setup") || !strings.HasPrefix(l.Bootstrap.Setup, "fetch ") {
		t.Errorf("lot a: sensitive %v, setup %q", l.Sensitive, l.Bootstrap.Setup)
	}
}
