package planner

import (
	"testing"
	"time"
)

// holdsMachine is a fakeMachine with live holds.
type holdsMachine struct {
	fakeMachine
	holds int
}

func (h holdsMachine) LiveHolds() int { return h.holds }

// TestHoldsLowerSessions: each live hold is one session fewer at once (and
// in the estimate); a cap all held allows none, the estimate assumes one.
func TestHoldsLowerSessions(t *testing.T) {
	src := `wave "w" {
  max_sessions = 3
}
repo "api" {
  path = "."
  parallel = 4
}
`
	for _, id := range []string{"a", "b", "c", "d"} {
		src += "lot \"" + id + "\" {\n  repo = repo.api\n  brief = \"x\"\n}\n"
	}
	good := fakeMachine{repo: RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"},
		agent: AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328 (Claude Code)"}}
	for _, tc := range []struct {
		m        Machine
		holds    int
		sessions int
		estimate time.Duration
	}{
		{good, 0, 3, 2 * time.Hour}, // a Machine without holds counts none
		{holdsMachine{good, 0}, 0, 3, 2 * time.Hour},
		{holdsMachine{good, 1}, 1, 2, 2 * time.Hour},
		{holdsMachine{good, 2}, 2, 1, 4 * time.Hour},
		{holdsMachine{good, 5}, 5, 0, 4 * time.Hour},
		{nil, 0, 3, 2 * time.Hour}, // offline
	} {
		p, diags := build(t, mustLoad(t, src), nil, tc.m, Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if tot := p.Totals; tot.Holds != tc.holds || tot.Sessions != tc.sessions || tot.Estimate != tc.estimate {
			t.Errorf("%T holds %d: Holds %d Sessions %d Estimate %v; want %d %d %v", tc.m, tc.holds, tot.Holds, tot.Sessions, tot.Estimate, tc.holds, tc.sessions, tc.estimate)
		}
	}
}
