package executor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

func TestPin(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		was                    state.State
		cadence, agent         string
		upgrade                bool
		wantCadence, wantAgent string
	}{
		{"first apply", state.State{}, "v1", "2.0", false, "v1", "2.0"},
		{"kept", state.State{CadenceVersion: "v1", AgentVersion: "2.0"}, "v2", "2.1", false, "v1", "2.0"},
		{"upgrade", state.State{CadenceVersion: "v1", AgentVersion: "2.0"}, "v2", "2.1", true, "v2", "2.1"},
		{"no agent probed", state.State{CadenceVersion: "v1", AgentVersion: "2.0"}, "v2", "", true, "v2", "2.0"},
		{"agent first seen", state.State{CadenceVersion: "v1"}, "v1", "2.0", false, "v1", "2.0"},
		{"unknown cadence", state.State{CadenceVersion: "v1"}, "", "", true, "v1", ""},
	} {
		st := tc.was
		pin(&st, tc.cadence, tc.agent, tc.upgrade)
		if st.CadenceVersion != tc.wantCadence || st.AgentVersion != tc.wantAgent {
			t.Errorf("%s: %q %q, want %q %q", tc.name, st.CadenceVersion, st.AgentVersion, tc.wantCadence, tc.wantAgent)
		}
	}
}

// TestApplyRecordsVersions: Apply records the versions in the state on
// its way in, and keeps the first ones on the next apply without -upgrade.
func TestApplyRecordsVersions(t *testing.T) {
	h := newHarness(t, applyWave)
	p, diags := planner.Build(planner.Input{Config: h.cfg, Options: planner.Options{Jobs: 2}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	lay := layout.New(filepath.Join(h.dir, "wave.hcl"), "w", filepath.Join(h.dir, "home"))
	apply := func(cadence, agent string, upgrade bool) *state.State {
		res, err := Apply(context.Background(), p, ApplyOptions{
			Config: h.cfg, Layout: lay, WaveDigest: "digest", Agent: h.agent, Git: h.git, Host: &fakeHost{},
			Env: []string{"PATH=" + os.Getenv("PATH")}, Jobs: 2,
			CadenceVersion: cadence, AgentVersion: agent, Upgrade: upgrade,
			run: func(context.Context, Options) (Result, error) { return Result{}, nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		st, _, err := state.Read(lay.StateFile())
		if err != nil {
			t.Fatal(err)
		}
		if res.State.CadenceVersion != st.CadenceVersion {
			t.Errorf("Result.State %q, file %q", res.State.CadenceVersion, st.CadenceVersion)
		}
		return st
	}
	if st := apply("v1.0.0", "2.1.0 (Claude Code)", false); st.CadenceVersion != "v1.0.0" || st.AgentVersion != "2.1.0 (Claude Code)" {
		t.Errorf("first apply recorded %q %q", st.CadenceVersion, st.AgentVersion)
	}
	if st := apply("v1.1.0", "2.2.0 (Claude Code)", false); st.CadenceVersion != "v1.0.0" || st.AgentVersion != "2.1.0 (Claude Code)" {
		t.Errorf("second apply changed the pin: %q %q", st.CadenceVersion, st.AgentVersion)
	}
	if st := apply("v1.1.0", "2.2.0 (Claude Code)", true); st.CadenceVersion != "v1.1.0" || st.AgentVersion != "2.2.0 (Claude Code)" {
		t.Errorf("-upgrade recorded %q %q", st.CadenceVersion, st.AgentVersion)
	}
}
