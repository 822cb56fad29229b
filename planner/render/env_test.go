package render

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

type toolchainMachine struct{ fakeMachine }

func (toolchainMachine) Repo(r *spec.Repo) planner.RepoFacts {
	f := planner.RepoFacts{Exists: true, IsGit: true, BaseSHA: "0123456789abcdef0123456789abcdef01234567", ProbableTest: "npm test"}
	switch r.Name {
	case "docs":
		f.ToolchainErr = errors.New("mise.toml: mise: python 3.12.2 is not installed (mise install)")
	case "web":
		f.Toolchain, f.ToolchainPath = "node 22.22.3 from .tool-versions (mise)", []string{"/mise/installs/node/22.22.3/bin"}
		f.ToolchainEnv = map[string]string{"NODE_OPTIONS": "--hunter2"}
	default:
		f.Toolchain, f.ToolchainPath = "node v22.22.3 from .nvmrc", []string{"/nvm/versions/node/v22.22.3/bin"}
	}
	return f
}

// TestEnvRendered: text, Markdown and JSON show each repository's
// toolchain and each lot's env names, never an env value (nor that of a
// variable mise sets), and a sensitive path_prepend as (sensitive); a lot
// whose repository's toolchain cannot be resolved is refused, with why.
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
			"Tools:     node v22.22.3 from .nvmrc in api; node 22.22.3 from .tool-versions (mise) in web; cannot be resolved in docs (their lots are refused)\n",
			"Env:       lot a: env LANG, TOKEN, PATH first bin; lot b: env LANG, PATH first (sensitive)\n",
			"× c  ",
			"refused: repo docs's toolchain cannot be resolved: mise.toml: mise: python 3.12.2 is not installed (mise install)",
		},
		"md": {"**Tools:** node v22.22.3 from .nvmrc in api; node 22.22.3", "**Env:** lot a: env LANG, TOKEN",
			"| `×` refused | <code>c</code>", "refused: repo docs's toolchain cannot be resolved"},
		"json": {
			`"toolchain": "node v22.22.3 from .nvmrc"`, `"toolchain_path": [` + "\n" + `        "/nvm/versions/node/v22.22.3/bin"`,
			`"toolchain_env": [` + "\n" + `        "NODE_OPTIONS"`, `"toolchain_error": "mise.toml: mise: python 3.12.2 is not installed (mise install)"`,
			`"action": "refused"`, `"refused": 1`,
			`"env": [` + "\n" + `        "LANG",` + "\n" + `        "TOKEN"`, `"path_prepend": [` + "\n" + `        "(sensitive)"`,
		},
	} {
		got := map[string]string{"text": text.String(), "md": md.String(), "json": js.String()}[name]
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
		if strings.Contains(got, "hunter2") || strings.Contains(got, "--hunter") || strings.Contains(got, "C.UTF-8") {
			t.Errorf("%s shows an env value:\n%s", name, got)
		}
	}
}
