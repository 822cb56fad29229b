package render

import (
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// agentFree reports whether no lot of the plan is an agent lot. The human
// formats then leave out what only agent lots have: the session cap, the
// Budget column of the Markdown table, and the budget line unless the wave
// sets a budget or something was spent (showBudget).
func agentFree(p *planner.Plan) bool {
	for i := range p.Lots {
		if p.Lots[i].Kind != spec.CommandLot {
			return false
		}
	}
	return true
}

// showBudget says whether the plan shows its budget line: it has an agent
// lot, or the wave sets a token or dollar budget, or the state records
// something spent.
func showBudget(p *planner.Plan) bool {
	t := p.Totals
	return !agentFree(p) || t.Budget > 0 || t.BudgetUSD > 0 || t.Spent > 0 || t.SpentMicro > 0
}

// concurrencyLine is the totals line of what runs at once, naming the cap
// that binds: "Sessions: at most 2 agent sessions at once: max_sessions = 2
// caps parallel = 4 in repo api; 3 command lots, at most 2 at once: -jobs 2
// (CPUs) caps parallel = 4 in repo r". An agent-free plan's line is labelled
// "Commands" and says nothing of sessions; it has none when no command lot
// is pending either (ok false).
func concurrencyLine(p *planner.Plan) (totalsLine, bool) {
	t := p.Totals
	free := agentFree(p)
	var parts []string
	switch {
	case free:
	case t.PendingAgent > 0:
		parts = append(parts, "at most "+plural(t.Sessions, "agent session", "agent sessions")+" at once"+
			capBinds(t.Agents, max(0, t.MaxSessions-t.Holds), sessionsCapLabel(t)))
		if t.Holds > 0 && t.Sessions == 0 {
			parts[len(parts)-1] += "; no session starts until a hold expires or is released (cadence release)"
		}
	default:
		parts = append(parts, "no agent session to run")
	}
	if t.PendingCommand > 0 {
		parts = append(parts, plural(t.PendingCommand, "command lot", "command lots")+", at most "+
			strconv.Itoa(t.Commands.At(t.Jobs))+" at once"+capBinds(t.Commands, t.Jobs, jobsCapLabel(t)))
	}
	if len(parts) == 0 {
		return totalsLine{}, false
	}
	label := "Sessions"
	if free {
		label = "Commands"
	}
	return totalsLine{label, strings.Join(parts, "; ")}, true
}

// capBinds says which of a kind's cap (capN, named capLabel) and its
// repositories' parallel bounds how many of its lots run at once, as the
// end of "at most N at once": ": -jobs 2 (CPUs) caps parallel = 4 in repo
// r" when the cap is below what the lots and parallel allow; ": parallel =
// 1 in repo r binds, below -jobs 8 (CPUs)" when parallel is; ": -jobs 2 and
// parallel = 2 in repo r bind" when both are; " (-jobs 8 (CPUs); parallel =
// 4 in repo r)" when neither does (there are no more lots).
func capBinds(c planner.Concurrency, capN int, capLabel string) string {
	var bound []planner.RepoConcurrency
	for _, r := range c.Repos {
		if r.Parallel < r.Pending {
			bound = append(bound, r)
		}
	}
	all := parallelLabel(c.Repos)
	switch {
	case capN < c.Allowed && all == "":
		return ": " + capLabel + " binds"
	case capN < c.Allowed:
		return ": " + capLabel + " caps " + all
	case len(bound) > 0 && c.Allowed < capN:
		return ": " + parallelLabel(bound) + " binds, below " + capLabel
	case len(bound) > 0:
		return ": " + capLabel + " and " + parallelLabel(bound) + " bind"
	case all == "":
		return " (" + capLabel + ")"
	}
	return " (" + capLabel + "; " + all + ")"
}

// maxParallelRepos is how many repositories parallelLabel names.
const maxParallelRepos = 3

// parallelLabel names the parallel of repositories: "parallel = 4 in repo
// api", "parallel = 4 in repo api, 1 in repo web", "the parallel of 5
// repos"; "" for none.
func parallelLabel(repos []planner.RepoConcurrency) string {
	switch {
	case len(repos) == 0:
		return ""
	case len(repos) > maxParallelRepos:
		return "the parallel of " + strconv.Itoa(len(repos)) + " repos"
	}
	parts := make([]string, len(repos))
	for i, r := range repos {
		parts[i] = strconv.Itoa(r.Parallel) + " in repo " + r.Name
	}
	return "parallel = " + strings.Join(parts, ", ")
}

// sessionsCapLabel names the session cap as it was set: "max_sessions =
// 2" (the wave's, or its default), "-max-sessions 3",
// "CADENCE_MAX_SESSIONS=3", less the machine's live holds: "max_sessions =
// 2 less 1 hold".
func sessionsCapLabel(t planner.Totals) string {
	n := strconv.Itoa(t.MaxSessions)
	var s string
	switch t.SessionsFrom {
	case planner.CapFlag:
		s = "-max-sessions " + n
	case planner.CapEnv:
		s = "CADENCE_MAX_SESSIONS=" + n
	default:
		s = "max_sessions = " + n
	}
	if t.Holds > 0 {
		s += " less " + plural(t.Holds, "hold", "holds")
	}
	return s
}

// jobsCapLabel names the command-lot cap as it was set: "-jobs 4", or
// "-jobs 2 (CPUs)" for the default.
func jobsCapLabel(t planner.Totals) string {
	s := "-jobs " + strconv.Itoa(t.Jobs)
	if t.JobsFrom == planner.CapCPUs {
		s += " (CPUs)"
	}
	return s
}
