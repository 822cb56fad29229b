package executor

import (
	"testing"

	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// The checkout guard watches every step that runs outside an OS sandbox:
// commands and test gates always; agent sessions when their sandbox is
// off, missing on this machine, or bypassed by the file tools.
func TestGuardsCheckout(t *testing.T) {
	on := &spec.Agent{Name: "claude"}
	off := &spec.Agent{Name: "claude", NoSandbox: true}
	bypass := &spec.Agent{Name: "claude", Settings: &claude.Settings{PermissionMode: "bypassPermissions"}}
	for _, c := range []struct {
		name    string
		kind    state.StepKind
		agent   *spec.Agent
		missing string
		want    bool
	}{
		{"command", state.StepRun, nil, "", true},
		{"test gate of an agent lot", state.StepTest, on, "", true},
		{"sandboxed session", state.StepImplement, on, "", false},
		{"sandbox = false", state.StepImplement, off, "", true},
		{"bypassPermissions", state.StepReview, bypass, "", true},
		{"sandbox missing here", state.StepImplement, on, "bubblewrap (bwrap) not found", true},
	} {
		lr := &lotRun{r: &runner{o: Options{Plan: &planner.Plan{Agent: planner.AgentFacts{SandboxMissing: c.missing}}}},
			n: &node{lot: &spec.Lot{Agent: c.agent}}}
		if got := lr.guardsCheckout(c.kind); got != c.want {
			t.Errorf("%s: guardsCheckout = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestShellRepos: the remotes watched for command and test steps are those
// of every repository of a command lot, and of an agent lot with a test
// gate; an agent lot without one is not watched.
func TestShellRepos(t *testing.T) {
	cmd, gated, agentOnly := &spec.Repo{Name: "cmd"}, &spec.Repo{Name: "gated", Test: "make test"}, &spec.Repo{Name: "agents"}
	nodes := []*node{
		{lot: &spec.Lot{ID: "a", Repo: cmd, Kind: spec.CommandLot}},
		{lot: &spec.Lot{ID: "b", Repo: cmd, Kind: spec.CommandLot}},
		{lot: &spec.Lot{ID: "c", Repo: agentOnly, Kind: spec.AgentLot}},
		{lot: &spec.Lot{ID: "d", Repo: gated, Kind: spec.AgentLot}},
	}
	got := shellRepos(nodes)
	if len(got) != 2 || got[0] != cmd || got[1] != gated {
		t.Errorf("shellRepos = %v, want cmd and gated", got)
	}
}
