package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/spec"
)

// boxlessMachine is a fakeMachine whose step sandbox cannot run.
type boxlessMachine struct{ fakeMachine }

func (boxlessMachine) StepSandboxMissing() string { return "bubblewrap (bwrap) not found on PATH" }

// TestStepSandboxWarnings: a pending lot whose command steps run outside
// the step sandbox is warned of, by the lot's or its repo's sandbox =
// false, and, on a machine that cannot run the sandbox, all the others
// with command steps; an agent lot without a test gate or setup is not.
func TestStepSandboxWarnings(t *testing.T) {
	const wave = `wave "w" {}
repo "app" {
  path = "."
  test = "make test"
}
repo "ops" {
  path    = "."
  sandbox = false
}
repo "plain" { path = "." }
lot "gated" {
  repo  = repo.app
  brief = "x"
}
lot "own" {
  repo    = repo.app
  run     = "make"
  sandbox = false
}
lot "deploy" {
  repo = repo.ops
  run  = "make deploy"
}
lot "none" {
  repo  = repo.plain
  brief = "x"
}
`
	good := fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}, AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328"}}
	for _, tc := range []struct {
		name string
		m    Machine
		want []string
	}{
		{"usable", good, []string{
			"lot own has sandbox = false: the command steps of lot own (run, test gates, setups) run outside the step sandbox; what they do to your checkouts, other repositories and the wave's files is only detected after each step, not prevented",
			"repo ops has sandbox = false: the command steps of lot deploy (run, test gates, setups) run outside the step sandbox; what they do to your checkouts, other repositories and the wave's files is only detected after each step, not prevented",
		}},
		{"missing", boxlessMachine{good}, []string{
			"lot own has sandbox = false: the command steps of lot own (run, test gates, setups) run outside the step sandbox; what they do to your checkouts, other repositories and the wave's files is only detected after each step, not prevented",
			"repo ops has sandbox = false: the command steps of lot deploy (run, test gates, setups) run outside the step sandbox; what they do to your checkouts, other repositories and the wave's files is only detected after each step, not prevented",
			"the step sandbox cannot run here (bubblewrap (bwrap) not found on PATH): the command steps of lot gated (run, test gates, setups) run unsandboxed, and the guards' detection after each step is all there is",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, diags := build(t, mustLoad(t, wave), nil, tc.m, Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			var got []string
			for _, w := range p.Warnings {
				if w.Kind == WarnStepNoSandbox {
					got = append(got, w.Message)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("no-step-sandbox warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestStepSandboxWritableShown: the folders a pending lot's
// sandbox_writable adds to its box are shown once per list, with its
// lots (relative to the wave file's folder when inside it); a lot whose
// sandbox is off, or on a machine without the sandbox, gets the other
// warnings instead.
func TestStepSandboxWritableShown(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"app", "cache", "out"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	abs := t.TempDir()
	src := `wave "w" {}
repo "app" {
  path = "app"
  sandbox_writable = ["cache"]
}
lot "a" {
  repo = repo.app
  run  = "make"
}
lot "b" {
  repo = repo.app
  run  = "make"
}
lot "c" {
  repo = repo.app
  run  = "make"
  sandbox_writable = ["out", "` + abs + `"]
}
lot "d" {
  repo    = repo.app
  run     = "make"
  sandbox = false
}
`
	cfg, diags := spec.NewLoader().LoadBytes([]byte(src), filepath.Join(dir, "wave.hcl"), spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	good := fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}, AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328"}}
	for _, tc := range []struct {
		name string
		m    Machine
		want []string
	}{
		{"usable", good, []string{
			"the command steps of lots a, b (run, test gates, setups) may also write ./cache in the step sandbox (sandbox_writable): what they leave there is neither prevented nor checked",
			"the command steps of lot c (run, test gates, setups) may also write ./out, " + abs + ", ./cache in the step sandbox (sandbox_writable): what they leave there is neither prevented nor checked",
		}},
		{"missing", boxlessMachine{good}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, diags := build(t, cfg, nil, tc.m, Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			var got []string
			for _, w := range p.Warnings {
				if w.Kind == WarnStepSandboxWritable {
					got = append(got, w.Message)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("step-sandbox-writable warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
