package step

import (
	"slices"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
)

func TestDeniedCalls(t *testing.T) {
	got := deniedCalls([]agent.Denial{{Tool: "Edit", Input: "/w/f"}, {Tool: "Bash", Input: "git commit"}, {Tool: "Edit", Input: "/w/f"}, {Tool: "Agent"}})
	if want := []string{"Edit (/w/f)", "Bash (git commit)", "Agent"}; !slices.Equal(got, want) {
		t.Errorf("deniedCalls = %q, want %q", got, want)
	}
	if deniedCalls(nil) != nil {
		t.Error("no denials: not nil")
	}
}
