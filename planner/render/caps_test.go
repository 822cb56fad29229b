package render

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// TestConcurrencyLine: the line names the cap that binds (the default -jobs
// of the CPUs capping a repository's parallel, the session cap and where
// it comes from, a repository's parallel) and an agent-free plan says
// nothing of sessions.
func TestConcurrencyLine(t *testing.T) {
	r := func(name string, parallel, pending int) planner.RepoConcurrency {
		return planner.RepoConcurrency{Name: name, Parallel: parallel, Pending: pending}
	}
	conc := func(repos ...planner.RepoConcurrency) planner.Concurrency {
		c := planner.Concurrency{Repos: repos}
		for _, r := range repos {
			c.Pending += r.Pending
			c.Allowed += min(r.Pending, r.Parallel)
		}
		return c
	}
	agent := []planner.LotPlan{{ID: "a", Kind: spec.AgentLot}}
	command := []planner.LotPlan{{ID: "c", Kind: spec.CommandLot}}
	tests := []struct {
		name string
		lots []planner.LotPlan
		t    planner.Totals
		want string
	}{
		{"the CPUs cap parallel", command, planner.Totals{PendingCommand: 3, Jobs: 2, JobsFrom: planner.CapCPUs, Commands: conc(r("r", 4, 3))},
			"Commands: 3 command lots, at most 2 at once: -jobs 2 (CPUs) caps parallel = 4 in repo r"},
		{"-jobs caps lots without a repo", command, planner.Totals{PendingCommand: 3, Jobs: 2, JobsFrom: planner.CapFlag, Commands: planner.Concurrency{Pending: 3, Allowed: 3}},
			"Commands: 3 command lots, at most 2 at once: -jobs 2 binds"},
		{"parallel binds", command, planner.Totals{PendingCommand: 3, Jobs: 8, JobsFrom: planner.CapCPUs, Commands: conc(r("r", 1, 3))},
			"Commands: 3 command lots, at most 1 at once: parallel = 1 in repo r binds, below -jobs 8 (CPUs)"},
		{"nothing binds", command, planner.Totals{PendingCommand: 2, Jobs: 8, JobsFrom: planner.CapCPUs, Commands: conc(r("r", 4, 2))},
			"Commands: 2 command lots, at most 2 at once (-jobs 8 (CPUs); parallel = 4 in repo r)"},
		{"no command pending", command, planner.Totals{Jobs: 2}, ""},
		{"max_sessions caps parallel", agent, planner.Totals{PendingAgent: 4, MaxSessions: 2, Sessions: 2, SessionsFrom: planner.CapWave, Agents: conc(r("api", 4, 4))},
			"Sessions: at most 2 agent sessions at once: max_sessions = 2 caps parallel = 4 in repo api"},
		{"CADENCE_MAX_SESSIONS", agent, planner.Totals{PendingAgent: 4, MaxSessions: 3, Sessions: 3, SessionsFrom: planner.CapEnv, Agents: conc(r("api", 2, 2), r("web", 2, 2))},
			"Sessions: at most 3 agent sessions at once: CADENCE_MAX_SESSIONS=3 caps parallel = 2 in repo api, 2 in repo web"},
		{"-max-sessions and parallel bind", agent, planner.Totals{PendingAgent: 4, MaxSessions: 2, Sessions: 2, SessionsFrom: planner.CapFlag, Agents: conc(r("api", 2, 4))},
			"Sessions: at most 2 agent sessions at once: -max-sessions 2 and parallel = 2 in repo api bind"},
		{"many repos", agent, planner.Totals{PendingAgent: 4, MaxSessions: 2, Sessions: 2, Agents: conc(r("a", 1, 1), r("b", 1, 1), r("c", 1, 1), r("d", 1, 1))},
			"Sessions: at most 2 agent sessions at once: max_sessions = 2 caps the parallel of 4 repos"},
		{"agent lots, none pending", agent, planner.Totals{MaxSessions: 2}, "Sessions: no agent session to run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := concurrencyLine(&planner.Plan{Lots: tt.lots, Totals: tt.t})
			got := ""
			if ok {
				got = l.label + ": " + l.value
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestAgentFreePlan: a plan of command lots only shows no budget line (unless
// the wave sets a budget), no session cap and no Budget column.
func TestAgentFreePlan(t *testing.T) {
	p := &planner.Plan{Wave: "w", File: "wave.hcl", Lots: []planner.LotPlan{{ID: "c", Kind: spec.CommandLot, Action: planner.ActionRun}},
		Totals: planner.Totals{Lots: 1, ByAction: map[planner.Action]int{planner.ActionRun: 1}, PendingCommand: 1, MaxSessions: 2, Jobs: 2,
			Commands: planner.Concurrency{Pending: 1, Allowed: 1}}}
	var text, md strings.Builder
	if err := Text(&text, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), md.String()} {
		for _, no := range []string{"Budget", "budget", "session", "tokens", "$0"} {
			if strings.Contains(out, no) {
				t.Errorf("an agent-free plan shows %q:\n%s", no, out)
			}
		}
	}
	if !strings.Contains(md.String(), "| | Lot | Repo | Steps or reason | Estimate |\n|---|---|---|---|---|\n") {
		t.Errorf("Markdown table head without the Budget column missing:\n%s", md.String())
	}
	// a budget set on the wave is still shown
	p.Totals.Budget = 1000
	text.Reset()
	if err := Text(&text, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Budget:") {
		t.Errorf("a wave budget is not shown:\n%s", text.String())
	}
}
