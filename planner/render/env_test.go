package render

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

type toolchainMachine struct{ fakeMachine }

func (toolchainMachine) Repo(r *spec.Repo) planner.RepoFacts {
	f := planner.RepoFacts{Exists: true, IsGit: true, BaseSHA: "0123456789abcdef0123456789abcdef01234567", ProbableTest: "npm test"}
	if r.Name != "docs" {
		f.Toolchain, f.ToolchainPath = "node v22.22.3 from .nvmrc", []string{"/nvm/versions/node/v22.22.3/bin"}
	}
	return f
}

// TestEnvRendered: text, Markdown and JSON show each repository's
// toolchain and each lot's env names, never an env value, and a sensitive
// path_prepend as (sensitive).
func TestEnvRendered(t *testing.T) {
	src := `wave "w" {}
defaults {
  env = { LANG = "C.UTF-8" }
}
repo "api" {
  path         = "api"
  env          = { TOKEN = env("API_TOKEN") }
  path_prepend = ["bin"]
}
repo "web" {
  path = "web"
}
repo "docs" {
  path = "docs"
}
lot "a" {
  repo  = repo.api
  brief = "b"
}
lot "b" {
  repo         = repo.web
  run          = "make"
  path_prepend = [env("SECRET_DIR")]
}
lot "c" {
  repo  = repo.docs
  brief = "c"
}
`
	lookup := func(name string) (string, bool) {
		return map[string]string{"API_TOKEN": "tok-hunter2", "SECRET_DIR": "/hunter2"}[name], name != ""
	}
	path := filepath.Join(t.TempDir(), "wave.hcl")
	cfg, diags := spec.NewLoader().LoadBytes([]byte(src), path, spec.Options{LookupEnv: lookup})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	p := build(t, planner.Input{Config: cfg, Machine: toolchainMachine{}})
	var text, md, js bytes.Buffer
	if err := Text(&text, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, p); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"text": {
			"Tools:     node v22.22.3 from .nvmrc in api, web\n",
			"Env:       lot a: env LANG, TOKEN, PATH first bin; lot b: env LANG, PATH first (sensitive); lot c: env LANG\n",
		},
		"md": {"**Tools:** node v22.22.3 from .nvmrc in api, web", "**Env:** lot a: env LANG, TOKEN"},
		"json": {
			`"toolchain": "node v22.22.3 from .nvmrc"`, `"toolchain_path": [` + "\n" + `        "/nvm/versions/node/v22.22.3/bin"`,
			`"env": [` + "\n" + `        "LANG",` + "\n" + `        "TOKEN"`, `"path_prepend": [` + "\n" + `        "(sensitive)"`,
		},
	} {
		got := map[string]string{"text": text.String(), "md": md.String(), "json": js.String()}[name]
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
		if strings.Contains(got, "hunter2") || strings.Contains(got, "C.UTF-8") {
			t.Errorf("%s shows an env value:\n%s", name, got)
		}
	}
}
