package spec

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEnvPrecedence: a lot's env is its own over its repo's over the
// defaults block's, per name, for agent and command lots; path_prepend
// entries come lot's first, then the repo's, then the defaults', each
// absolute against the wave file's folder.
func TestEnvPrecedence(t *testing.T) {
	cfg, diags := load(t, `wave "w" {}
defaults {
  env          = { A = "defaults", B = "defaults", C = "defaults" }
  path_prepend = ["tools/d"]
}
repo "r" {
  path         = "."
  env          = { B = "repo", C = "repo" }
  path_prepend = ["/opt/r"]
}
repo "bare" {
  path = "."
}
lot "a" {
  repo         = repo.r
  brief        = "x"
  env          = { C = "lot" }
  path_prepend = ["bin"]
}
lot "cmd" {
  repo = repo.r
  run  = "true"
}
lot "none" {
  run = "true"
}
lot "plain" {
  repo  = repo.bare
  brief = "x"
}
`, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	dir := cfg.Dir
	for _, x := range []struct {
		lot  string
		vars map[string]string
		path []string
	}{
		{"a", map[string]string{"A": "defaults", "B": "repo", "C": "lot"}, []string{filepath.Join(dir, "bin"), "/opt/r", filepath.Join(dir, "tools/d")}},
		{"cmd", map[string]string{"A": "defaults", "B": "repo", "C": "repo"}, []string{"/opt/r", filepath.Join(dir, "tools/d")}},
		{"none", map[string]string{"A": "defaults", "B": "defaults", "C": "defaults"}, []string{filepath.Join(dir, "tools/d")}},
		{"plain", map[string]string{"A": "defaults", "B": "defaults", "C": "defaults"}, []string{filepath.Join(dir, "tools/d")}},
	} {
		e := cfg.Lot(x.lot).Env
		if !reflect.DeepEqual(e.Vars, x.vars) || !reflect.DeepEqual(e.PathPrepend, x.path) {
			t.Errorf("lot %s: env %v path %v; want %v %v", x.lot, e.Vars, e.PathPrepend, x.vars, x.path)
		}
	}
	if got := cfg.Repo("r").Env.Names(); !reflect.DeepEqual(got, []string{"B", "C"}) {
		t.Errorf("repo r names = %v", got)
	}
}

// TestEnvNames: env refuses what is not a POSIX name and the names cadence
// owns, with the reason; path_prepend refuses an entry PATH cannot hold.
func TestEnvNames(t *testing.T) {
	for _, x := range []struct{ attr, want string }{
		{`env = { "1A" = "x" }`, "not a variable name"},
		{`env = { "A-B" = "x" }`, "not a variable name"},
		{`env = { PATH = "/x" }`, "path_prepend"},
		{`env = { HOME = "/x" }`, "HOME"},
		{`env = { CADENCE_LOT = "x" }`, "CADENCE_"},
		{`env = { CADENCE_HOME = "x" }`, "CADENCE_"},
		{`env = { GIT_CONFIG_COUNT = "0" }`, "push guards"},
		{`env = { CLAUDE_CODE_MAX_RETRIES = "9" }`, "max_retries"},
		{`env = "A=b"`, "object of strings"},
		{`path_prepend = ["a:b"]`, "':'"},
		{`path_prepend = [""]`, "empty"},
	} {
		_, diags := load(t, "wave \"w\" {}\nrepo \"r\" {\n  path = \".\"\n  "+x.attr+"\n}\n", Options{})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), x.want) {
			t.Errorf("%s: diags %v, want an error with %q", x.attr, diags, x.want)
		}
	}
	_, diags := load(t, "wave \"w\" {}\nlot \"a\" {\n  run = \"true\"\n  env = { A_1 = \"\", _b = \"x\" }\n}\n", Options{})
	if diags.HasErrors() {
		t.Errorf("valid names refused: %v", diags)
	}
}

// TestEnvSensitive: a sensitive env value marks the lot's env (its values
// are never shown anyway) but not its names; a sensitive map or name marks
// EnvNames; a sensitive path_prepend marks path_prepend. A lot inherits
// the marks of its repo's and the defaults' env.
func TestEnvSensitive(t *testing.T) {
	lookup := func(name string) (string, bool) { return "s3cret", name == "TOKEN" || name == "KEY" }
	cfg, diags := load(t, `wave "w" {}
variable "all" {
  sensitive = true
  default   = { X = "1" }
}
repo "r" {
  path = "."
  env  = { TOKEN = env("TOKEN") }
}
lot "a" {
  repo  = repo.r
  brief = "x"
}
lot "b" {
  run          = "true"
  env          = var.all
  path_prepend = [env("KEY")]
}
lot "c" {
  run = "true"
  env = { (env("KEY")) = "v" }
}
`, Options{LookupEnv: lookup})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if a := cfg.Lot("a"); a.Env.Vars["TOKEN"] != "s3cret" || !a.Sensitive.Has("env") || a.Sensitive.Has(EnvNames) {
		t.Errorf("lot a: env %v sensitive %v", a.Env.Vars, a.Sensitive)
	}
	if b := cfg.Lot("b"); !b.Sensitive.Has(EnvNames) || !b.Sensitive.Has("path_prepend") {
		t.Errorf("lot b: sensitive %v", b.Sensitive)
	}
	if c := cfg.Lot("c"); !c.Sensitive.Has(EnvNames) || c.Env.Vars["s3cret"] != "v" {
		t.Errorf("lot c: env %v sensitive %v", c.Env.Vars, c.Sensitive)
	}
}

// TestEnvSecretEntries: Env.Secret names each entry whose value derives
// from a sensitive one (env(), a sensitive variable), every entry of a
// sensitive map or of one with a sensitive name, and follows the merge:
// a lot's plain value over its repository's secret one is not secret,
// the repository's secret entry the lot does not set still is.
func TestEnvSecretEntries(t *testing.T) {
	lookup := func(name string) (string, bool) { return "s3cret", name == "TOKEN" || name == "KEY" }
	cfg, diags := load(t, `wave "w" {}
variable "all" {
  sensitive = true
  default   = { X = "1", Y = "2" }
}
repo "r" {
  path = "."
  env  = { TOKEN = env("TOKEN"), OTHER = env("KEY") }
}
lot "a" {
  repo  = repo.r
  brief = "x"
  env   = { PLAIN = "1", OTHER = "plain", OWN = "k-${env("KEY")}" }
}
lot "b" {
  run = "true"
  env = var.all
}
lot "c" {
  run = "true"
  env = { (env("KEY")) = "v", P = "1" }
}
`, Options{LookupEnv: lookup})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := map[string]map[string]bool{
		"a": {"TOKEN": true, "OWN": true},
		"b": {"X": true, "Y": true},
		"c": {"s3cret": true, "P": true},
	}
	for id, w := range want {
		got := cfg.Lot(id).Env.Secret
		if len(got) != len(w) {
			t.Errorf("lot %s: secret entries %v, want %v", id, got, w)
			continue
		}
		for n := range w {
			if !got[n] {
				t.Errorf("lot %s: secret entries %v, want %v", id, got, w)
			}
		}
	}
}
