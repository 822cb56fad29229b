package planner

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/spec"
)

// toolchainMachine answers preflight with a toolchain per repository name.
type toolchainMachine struct {
	tc  map[string]string
	err map[string]error
}

func (m toolchainMachine) Repo(r *spec.Repo) RepoFacts {
	f := RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc", ToolchainErr: m.err[r.Name]}
	if tc := m.tc[r.Name]; tc != "" {
		f.Toolchain, f.ToolchainPath = tc, []string{"/nvm/" + r.Name + "/bin"}
	}
	return f
}

func (toolchainMachine) Agent(*spec.Agent) AgentFacts {
	return AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328"}
}

const envWave = `wave "w" {}
variable "s" {
  sensitive = true
  default   = "hunter2"
}
defaults {
  env = { LANG = "C" }
}
repo "api" {
  path         = "api"
  env          = { TOKEN = var.s }
  path_prepend = ["/opt/${var.s}"]
}
repo "web" {
  path         = "web"
  path_prepend = ["tools"]
}
lot "a" {
  repo  = repo.api
  brief = "b"
}
lot "b" {
  repo  = repo.web
  run   = "make"
  env   = { CI = "1" }
}
`

// TestLotEnvAndToolchain: a plan lists a lot's env names (never values)
// and path_prepend, Redacted when sensitive; a repository's toolchain;
// and an unresolvable toolchain file refuses, naming the repo's lots.
func TestLotEnvAndToolchain(t *testing.T) {
	cfg, diags := spec.NewLoader().LoadBytes([]byte(envWave), filepath.Join(t.TempDir(), "wave.hcl"), spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	m := toolchainMachine{tc: map[string]string{"web": "node v22.22.3 from .nvmrc"}}
	p, diags := build(t, cfg, nil, m, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	lots := byID(p)
	if a := lots["a"]; !reflect.DeepEqual(a.Env, []string{"LANG", "TOKEN"}) || !reflect.DeepEqual(a.PathPrepend, []string{spec.Redacted}) {
		t.Errorf("lot a: env %v path %v", a.Env, a.PathPrepend)
	}
	if b := lots["b"]; !reflect.DeepEqual(b.Env, []string{"CI", "LANG"}) || !reflect.DeepEqual(b.PathPrepend, []string{filepath.Join(cfg.Dir, "tools")}) {
		t.Errorf("lot b: env %v path %v", b.Env, b.PathPrepend)
	}
	if r := p.Repos[1]; r.Toolchain != "node v22.22.3 from .nvmrc" || !reflect.DeepEqual(r.ToolchainPath, []string{"/nvm/web/bin"}) || p.Repos[0].Toolchain != "" {
		t.Errorf("repos: %+v", p.Repos)
	}
	for _, w := range p.Warnings {
		if w.Kind == WarnToolchain {
			t.Errorf("unexpected warning %+v", w)
		}
	}

	m.err = map[string]error{"web": errors.New(`.nvmrc: no installed Node version matches "18"`)}
	p, diags = build(t, cfg, nil, m, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var found bool
	for _, w := range p.Warnings {
		if w.Kind == WarnToolchain {
			found = true
			if !w.Refuses || w.Subject != "web" || !reflect.DeepEqual(w.LotIDs, []string{"b"}) || !strings.Contains(w.Message, `no installed Node version matches "18"`) {
				t.Errorf("warning %+v", w)
			}
		}
	}
	if !found {
		t.Errorf("no toolchain warning in %+v", p.Warnings)
	}
}
