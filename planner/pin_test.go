package planner

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
)

// TestPinned: another cadence than the state's refuses (unless -upgrade),
// another agent CLI version warns; no recorded version, no version of
// now, or nothing pending says nothing.
func TestPinned(t *testing.T) {
	good := RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}
	m := fakeMachine{good, AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328 (Claude Code)"}}
	done := map[string]*state.Lot{}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		done[id] = &state.Lot{Status: state.LotDone}
	}
	for _, tc := range []struct {
		name           string
		cadence, agent string // recorded
		now            string // Options.CadenceVersion
		upgrade        bool
		lots           map[string]*state.Lot
		want           map[WarningKind]bool // kind → refuses
		text           string
	}{
		{name: "same", cadence: "v1.0.0", agent: "2.1.328 (Claude Code)", now: "v1.0.0"},
		{name: "none recorded", now: "v1.0.0"},
		{name: "now unknown", cadence: "v1.0.0"},
		{name: "cadence changed", cadence: "v1.0.0", now: "v1.1.0",
			want: map[WarningKind]bool{WarnCadenceChanged: true},
			text: "the wave was started with cadence v1.0.0; this is cadence v1.1.0: apply refuses to go on with another cadence unless -upgrade"},
		{name: "upgrade", cadence: "v1.0.0", now: "v1.1.0", upgrade: true,
			want: map[WarningKind]bool{WarnCadenceChanged: false}, text: "-upgrade records this version"},
		{name: "dirty differs", cadence: "dev, revision 0123456789ab (modified: uncommitted changes)", now: "dev, revision 0123456789ab",
			want: map[WarningKind]bool{WarnCadenceChanged: true}},
		{name: "agent changed", cadence: "v1.0.0", agent: "2.0.0 (Claude Code)", now: "v1.0.0",
			want: map[WarningKind]bool{WarnAgentChanged: false},
			text: "the wave was started with agent CLI 2.0.0 (Claude Code); this is 2.1.328 (Claude Code)"},
		{name: "both", cadence: "v1.0.0", agent: "2.0.0", now: "v2.0.0",
			want: map[WarningKind]bool{WarnCadenceChanged: true, WarnAgentChanged: false}},
		{name: "wave done", cadence: "v1.0.0", agent: "2.0.0", now: "v2.0.0", lots: done},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lots := tc.lots
			if lots == nil {
				lots = map[string]*state.Lot{}
			}
			st := &state.State{FormatVersion: state.FormatVersion, Status: state.WaveInterrupted, CadenceVersion: tc.cadence, AgentVersion: tc.agent, Lots: lots}
			p, diags := build(t, mustLoad(t, chain), st, m, Options{CadenceVersion: tc.now, Upgrade: tc.upgrade})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			got := map[WarningKind]bool{}
			var texts []string
			for _, w := range p.Warnings {
				if w.Kind == WarnCadenceChanged || w.Kind == WarnAgentChanged {
					got[w.Kind] = w.Refuses
					texts = append(texts, w.Message)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %v, want %v", got, tc.want)
			}
			for k, r := range tc.want {
				if g, ok := got[k]; !ok || g != r {
					t.Errorf("%s: refuses %v (present %v), want %v", k, g, ok, r)
				}
			}
			if tc.text != "" && !strings.Contains(strings.Join(texts, "\n"), tc.text) {
				t.Errorf("messages %q, want %q", texts, tc.text)
			}
		})
	}
}
