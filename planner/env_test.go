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
// and an unresolvable toolchain file refuses the repo's lots, not the
// apply (TestToolchainRefusesLots).
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
			if w.Refuses || w.Subject != "web" || !reflect.DeepEqual(w.LotIDs, []string{"b"}) || !strings.Contains(w.Message, `no installed Node version matches "18"`) {
				t.Errorf("warning %+v", w)
			}
		}
	}
	if !found {
		t.Errorf("no toolchain warning in %+v", p.Warnings)
	}
}

const refuseWave = `wave "w" {}
repo "api" { path = "api" }
repo "web" { path = "web" }
lot "a" {
  repo  = repo.api
  brief = "b"
}
lot "b" {
  repo = repo.web
  run  = "make"
}
lot "c" {
  repo       = repo.api
  run        = "make"
  depends_on = [lot.b]
}
lot "d" {
  repo       = repo.api
  run        = "make"
  depends_on = [lot.c, lot.a]
}
lot "e" {
  repo  = repo.api
  also  = [repo.web]
  brief = "b"
}
`

// TestToolchainRefusesLots: a repository whose toolchain file cannot be
// resolved refuses its own lots and those that work in it through also
// (ActionRefused, with the reason), blocks their dependents, and lets the
// others run; its warning does not refuse the apply. The RepoPlan says
// why. Without an error, nothing is refused.
func TestToolchainRefusesLots(t *testing.T) {
	cfg, diags := spec.NewLoader().LoadBytes([]byte(refuseWave), filepath.Join(t.TempDir(), "wave.hcl"), spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	m := toolchainMachine{err: map[string]error{"web": errors.New(".tool-versions: mise: node 18.0.0 is not installed")}}
	p, diags := build(t, cfg, nil, m, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	lots := byID(p)
	want := map[string]Action{"a": ActionRun, "b": ActionRefused, "c": ActionBlocked, "d": ActionBlocked, "e": ActionRefused}
	for id, a := range want {
		if lots[id].Action != a {
			t.Errorf("lot %s: %s (%q), want %s", id, lots[id].Action, lots[id].Reason, a)
		}
	}
	if r := lots["b"].Reason; r != "repo web's toolchain cannot be resolved: .tool-versions: mise: node 18.0.0 is not installed" {
		t.Errorf("reason of b: %q", r)
	}
	if r := lots["c"].Reason; r != "b refused" {
		t.Errorf("reason of c: %q", r)
	}
	if r := lots["d"].Reason; r != "c blocked" {
		t.Errorf("reason of d: %q", r)
	}
	if p.Totals.PendingAgent != 1 || p.Totals.PendingCommand != 0 || p.Totals.ByAction[ActionRefused] != 2 {
		t.Errorf("totals %+v", p.Totals)
	}
	if len(p.Refusals()) != 0 {
		t.Errorf("the apply is refused: %+v", p.Refusals())
	}
	if p.Repos[1].ToolchainErr == "" || p.Repos[0].ToolchainErr != "" {
		t.Errorf("repos %+v", p.Repos)
	}
	var w *Warning
	for i := range p.Warnings {
		if p.Warnings[i].Kind == WarnToolchain {
			w = &p.Warnings[i]
		}
	}
	if w == nil || !reflect.DeepEqual(w.LotIDs, []string{"b", "e"}) || w.Refuses {
		t.Errorf("warning %+v", w)
	}

	p, _ = build(t, cfg, nil, toolchainMachine{}, Options{})
	if n := p.Totals.ByAction[ActionRefused] + p.Totals.ByAction[ActionBlocked]; n != 0 {
		t.Errorf("%d lots refused or blocked without a toolchain error", n)
	}
}
