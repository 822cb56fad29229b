package executor

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// TestLotEnvPrecedence: a session, a test gate and a command lot see the
// lot's env over its repo's over the defaults', and PATH as the lot's
// path_prepend, then the repo's, then the defaults', then the toolchain
// the plan resolved, then the inherited PATH; cadence's own environment
// is left alone.
func TestLotEnvPrecedence(t *testing.T) {
	h := newHarness(t, `wave "w" {}
defaults {
  env          = { A = "defaults", B = "defaults", C = "defaults" }
  path_prepend = ["/opt/d"]
}
repo "r" {
  path         = "."
  parallel     = 2
  test         = "printf '%s|%s|%s|%s\n' \"$A\" \"$B\" \"$C\" \"$PATH\" > \"$OUT/gate-$CADENCE_LOT\""
  env          = { B = "repo", C = "repo" }
  path_prepend = ["/opt/r"]
}
lot "a" {
  repo         = repo.r
  brief        = "x"
  env          = { A = "lot" }
  path_prepend = ["/opt/a"]
}
lot "c" {
  repo = repo.r
  run  = "printf '%s|%s|%s|%s\n' \"$A\" \"$B\" \"$C\" \"$PATH\" > \"$OUT/cmd\""
  env  = { C = "lot" }
}
`)
	var mu sync.Mutex
	var sessEnv []string
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if !s.ReadOnly {
			mu.Lock()
			sessEnv = append([]string{}, s.Env...)
			mu.Unlock()
		}
		out := Outcome{Status: state.StepOK, Report: &Report{Summary: "ok"}}
		if s.ReadOnly {
			out.Report = &Report{Verdict: "fine"}
		}
		return out, time.Millisecond
	}
	out := t.TempDir()
	inherited := "/usr/bin:/bin"
	res, err := h.runWith(context.Background(), planner.Options{}, func(o *Options) {
		o.Env = []string{"PATH=" + inherited, "OUT=" + out, "A=inherited"}
		for i := range o.Plan.Repos {
			o.Plan.Repos[i].ToolchainPath = []string{"/nvm/v22.22.3/bin"}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if lots := h.lots(); lots["a"].Status != state.LotDone || lots["c"].Status != state.LotDone {
		t.Fatalf("res %+v, lots a %+v c %+v", res, lots["a"], lots["c"])
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if got, want := read("gate-a"), "lot|repo|repo|/opt/a:/opt/r:/opt/d:/nvm/v22.22.3/bin:"+inherited; got != want {
		t.Errorf("lot a's test gate saw %q, want %q", got, want)
	}
	if got, want := read("gate-c"), "defaults|repo|lot|/opt/r:/opt/d:/nvm/v22.22.3/bin:"+inherited; got != want {
		t.Errorf("lot c's test gate saw %q, want %q", got, want)
	}
	if got, want := read("cmd"), "defaults|repo|lot|/opt/r:/opt/d:/nvm/v22.22.3/bin:"+inherited; got != want {
		t.Errorf("command lot saw %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"A=lot", "B=repo", "C=repo", "PATH=/opt/a:/opt/r:/opt/d:/nvm/v22.22.3/bin:" + inherited}
	if !reflect.DeepEqual(sessEnv, want) {
		t.Errorf("session env = %q, want %q", sessEnv, want)
	}
	if _, set := os.LookupEnv("B"); set {
		t.Errorf("cadence's own environment got B")
	}
}

// TestLotEnvKeepsGuardFirst: the guard's folder stays first on PATH, before
// the lot's path_prepend; without path_prepend or a toolchain, PATH is not
// set again.
func TestLotEnvKeepsGuardFirst(t *testing.T) {
	guard := []string{"GIT_CONFIG_COUNT=1", "PATH=/guard/bin:/usr/bin"}
	inherited := []string{"PATH=/usr/bin"}
	e := spec.Env{Vars: map[string]string{"Z": "1", "A": "2"}, PathPrepend: []string{"/x"}}
	got := lotEnv(guard, inherited, e, []string{"/nvm/bin"}, nil)
	want := []string{"GIT_CONFIG_COUNT=1", "PATH=/guard/bin:/usr/bin", "A=2", "Z=1", "PATH=/guard/bin:/x:/nvm/bin:/usr/bin"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lotEnv = %q, want %q", got, want)
	}
	if got := lotEnv(nil, inherited, spec.Env{Vars: map[string]string{"A": "1"}}, nil, nil); !reflect.DeepEqual(got, []string{"A=1"}) {
		t.Errorf("no PATH change: %q", got)
	}
	if got := lotEnv(nil, nil, spec.Env{PathPrepend: []string{"/x"}}, nil, nil); !reflect.DeepEqual(got, []string{"PATH=/x"}) {
		t.Errorf("no inherited PATH: %q", got)
	}
}

// TestLotEnvToolchainVars: the variables a repository's toolchain sets
// (mise env) come before the lot's own, sorted, and one the lot sets is
// the lot's alone.
func TestLotEnvToolchainVars(t *testing.T) {
	e := spec.Env{Vars: map[string]string{"JAVA_HOME": "/lot/java"}}
	got := lotEnv(nil, []string{"PATH=/usr/bin"}, e, []string{"/m/go/bin"}, map[string]string{"JAVA_HOME": "/m/java", "GOROOT": "/m/go"})
	want := []string{"GOROOT=/m/go", "JAVA_HOME=/lot/java", "PATH=/m/go/bin:/usr/bin"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lotEnv = %q, want %q", got, want)
	}
}
