package planner

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
)

const branchWave = `wave "w" {}
repo "app" {
  path = "."
  test = "true"
}
lot "a" {
  repo = repo.app
  run  = "true"
}
lot "b" {
  repo = repo.app
  run  = "true"
}
lot "c" {
  run = "true"
}
`

// TestLotBranches checks the rule of the lot branches' names (branches.go)
// and the plan's refusals, against the branches a repository holds.
func TestLotBranches(t *testing.T) {
	cfg := mustLoad(t, branchWave)
	keyed := KeyedNamespace("w", layout.New(cfg.File, "w", "").StateKey())
	if !strings.HasPrefix(keyed, "cadence/w-") || len(keyed) != len("cadence/w-")+8 {
		t.Fatalf("keyed namespace %q", keyed)
	}
	recorded := func(branches map[string]string) *state.State {
		st := &state.State{Lots: map[string]*state.Lot{}}
		for id, b := range branches {
			st.Lots[id] = &state.Lot{Status: state.LotInterrupted, Branch: b}
		}
		return st
	}
	for _, tc := range []struct {
		name     string
		found    []string // the repository's branches cadence, cadence/…
		st       *state.State
		offline  bool
		a, b     string // the lots' planned branches
		refusal  string // in the error diagnostic's detail ("" for none)
		refusals int
	}{
		{name: "none", a: "cadence/w/a", b: "cadence/w/b"},
		{name: "another wave's", found: []string{"cadence/w/a", "cadence/w/x"}, a: keyed + "/a", b: keyed + "/b"},
		{name: "another wave name", found: []string{"cadence/w2/a", "cadence/wx/a"}, a: "cadence/w/a", b: "cadence/w/b"},
		{name: "recorded keyed", st: recorded(map[string]string{"a": keyed + "/a"}), found: []string{keyed + "/a"}, a: keyed + "/a", b: keyed + "/b"},
		{name: "recorded plain, another wave's beside", st: recorded(map[string]string{"a": "cadence/w/a"}), found: []string{"cadence/w/a", keyed + "/b"}, a: "cadence/w/a", b: "cadence/w/b"},
		{name: "recorded, a lot's branch another's", st: recorded(map[string]string{"a": "cadence/w/a"}), found: []string{"cadence/w/a", "cadence/w/b"},
			a: "cadence/w/a", b: "cadence/w/b", refusal: "the branch cadence/w/b is there, which this wave's state does not record: it is another wave's named \"w\"", refusals: 1},
		{name: "both namespaces taken", found: []string{"cadence/w/x", keyed + "/y"}, a: "cadence/w/a", b: "cadence/w/b",
			refusal: "the branches cadence/w/x, " + keyed + "/y are there, which this wave's state does not record: they are another wave's named \"w\" over this repository", refusals: 1},
		{name: "lead's cadence", found: []string{"cadence"}, a: "cadence/w/a", b: "cadence/w/b",
			refusal: "the branch cadence exists, so git cannot make the lot branches cadence/w/<lot>", refusals: 1},
		{name: "lead's cadence/w", found: []string{"cadence/w"}, a: "cadence/w/a", b: "cadence/w/b",
			refusal: "the branch cadence/w exists, so git cannot make the lot branches cadence/w/<lot>", refusals: 1},
		{name: "a branch inside a lot's", found: []string{"cadence/w/a/x"}, a: keyed + "/a", b: keyed + "/b"},
		{name: "recorded, a branch inside a lot's", st: recorded(map[string]string{"a": "cadence/w/a"}), found: []string{"cadence/w/b/x"}, a: "cadence/w/a", b: "cadence/w/b",
			refusal: "the branch cadence/w/b/x exists, so git cannot make the lot branch cadence/w/b", refusals: 1},
		{name: "offline", found: []string{"cadence"}, offline: true, a: "cadence/w/a", b: "cadence/w/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Machine = fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc", Branches: tc.found}, AgentFacts{}}
			if tc.offline {
				m = nil
			}
			p, diags := build(t, cfg, tc.st, m, Options{})
			var got []string
			for _, d := range diags {
				if d.Summary == "Lot branch name taken" {
					got = append(got, d.Detail)
					if d.Subject == nil || d.Subject.Start.Line != 2 {
						t.Errorf("diagnostic at %v, want the repo block (line 2)", d.Subject)
					}
				}
			}
			if len(got) != tc.refusals || (tc.refusal != "" && !strings.Contains(got[0], tc.refusal)) {
				t.Fatalf("refusals %q, want %d with %q", got, tc.refusals, tc.refusal)
			}
			if p == nil {
				return
			}
			lots := byID(p)
			if lots["a"].Branch != tc.a || lots["b"].Branch != tc.b || lots["c"].Branch != "" {
				t.Errorf("branches a %q b %q c %q, want %q %q \"\"", lots["a"].Branch, lots["b"].Branch, lots["c"].Branch, tc.a, tc.b)
			}
		})
	}
}

func TestRecordedNamespace(t *testing.T) {
	st := &state.State{Lots: map[string]*state.Lot{"b": {Branch: "cadence/w-0123abcd/b"}, "a": {}, "c": nil}}
	if got := RecordedNamespace(st); got != "cadence/w-0123abcd" {
		t.Errorf("RecordedNamespace = %q", got)
	}
	if got := RecordedNamespace(&state.State{Lots: map[string]*state.Lot{"a": {}}}); got != "" {
		t.Errorf("RecordedNamespace of none = %q", got)
	}
	if got := RecordedNamespace(nil); got != "" {
		t.Errorf("RecordedNamespace(nil) = %q", got)
	}
}
