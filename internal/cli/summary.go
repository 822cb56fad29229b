package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cadence-run/cadence/executor"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// summary prints the end of a run: the end line (how many lots are done,
// what is left: state.Left, and the wave's status: state.WaveEnd), the lot
// table, the budget line, the questions with the command that answers
// them, the findings of lots handed back, and the cause of lots
// interrupted with how they resume.
func (e *env) summary(w *wave, p *planner.Plan, st *state.State, res executor.Result) {
	done := res.Lots[state.LotDone]
	fmt.Fprintf(e.stdout, "\nWave %q: %d of %d lots done", w.cfg.Wave.Name, done, len(p.Lots))
	for _, left := range state.Left(res.Lots, res.Outside) {
		fmt.Fprintf(e.stdout, "; %s", left)
	}
	fmt.Fprintf(e.stdout, " (%s).\n\n", res.Status)
	agents := planHasAgents(p, st)
	lotTable(e.stdout, p, st, agents)
	agentConfigLines(e.stdout, p, st)
	if agents || p.Totals.Budget > 0 || p.Totals.BudgetUSD > 0 {
		fmt.Fprintln(e.stdout)
		budgetLine(e.stdout, st.Consumed, int64(p.Totals.Budget), int64(p.Totals.BudgetUSD))
		vendorLines(e.stdout, st.Lots)
	}
	switch res.Status {
	case state.WaveSuspendedBudget:
		budgetHint(e, w, p, res)
	case state.WaveSuspendedQuota:
		if res.ResetAt == nil {
			fmt.Fprintln(e.stdout, "The agent hit a usage limit; when it resets is unknown (the agent's messages gave no time): apply again later.")
			break
		}
		if !res.ResetAt.After(time.Now()) {
			// The limit's message named a time already past (a clock
			// skew, a reset during the session's retries).
			fmt.Fprintf(e.stdout, "The agent hit a usage limit; the reset time it gave (%s) has passed: apply again now.\n", res.ResetAt.Local().Format(time.RFC1123))
			break
		}
		fmt.Fprintf(e.stdout, "The agent hit a usage limit: apply again after %s.\n", res.ResetAt.Local().Format(time.RFC1123))
	case state.WaveSuspendedAPI:
		fmt.Fprintf(e.stdout, "%s, then cadence apply %s resumes every lot.\n", res.API, w.file)
	case state.WaveInterrupted:
		if res.Incident != "" {
			fmt.Fprintf(e.stdout, "INCIDENT: %s.\nThe wave stopped: check what it names before you apply again.\n", res.Incident)
			break
		}
		switch {
		case res.Machine != "":
			fmt.Fprintf(e.stdout, "Stopped: %s.\nThe running steps ended; once there is room, cadence apply %s resumes.\n", res.Machine, w.file)
		case res.Stopped != "":
			fmt.Fprintf(e.stdout, "Stopped by the lead (cadence stop): the running steps ended; cadence apply %s resumes.\n", w.file)
		default:
			fmt.Fprintf(e.stdout, "Interrupted: cadence apply %s resumes.\n", w.file)
		}
		if res.Lots[state.LotQuestion] > 0 {
			fmt.Fprintln(e.stdout, "Lots waiting for an answer go on once it is given (cadence answer).")
		}
	case state.WavePartial:
		fmt.Fprintf(e.stdout, "Every selected lot is done; %d lot(s) of the wave were not selected by -target: cadence apply %s runs them.\n", res.Outside, w.file)
	}
	for _, lp := range p.Lots {
		l := st.Lots[lp.ID]
		if l == nil {
			continue
		}
		if q := l.Pending(); q != nil && l.Status == state.LotQuestion {
			fmt.Fprintf(e.stdout, "\n%s asks: %s\n  cadence answer %s %s %q\n", lp.ID, visibleControls(q.Text, true), w.file, lp.ID, "…")
		}
		if l.Status == state.LotInterrupted && ctxLive(res) {
			fmt.Fprintf(e.stdout, "\n%s interrupted: %s\n  cadence apply %s resumes it", lp.ID, visibleControls(l.Cause, true), w.file)
			if strings.HasPrefix(l.Cause, "integration waits") {
				fmt.Fprint(e.stdout, " (the integration only; its work is done)")
			}
			fmt.Fprintln(e.stdout)
		}
		if l.Status == state.LotHandedBack || l.Status == state.LotFailed {
			fmt.Fprintf(e.stdout, "\n%s %s: %s\n", lp.ID, l.Status, visibleControls(l.Cause, true))
			for _, f := range l.Findings {
				loc := ""
				if f.File != "" {
					loc = " " + f.File
					if f.Line > 0 {
						loc += fmt.Sprintf(":%d", f.Line)
					}
				}
				fmt.Fprintf(e.stdout, "  [%s]%s %s\n", f.Severity, loc, firstLine(f.Text))
			}
			if l.Branch != "" {
				switch {
				case strings.Contains(l.Cause, executor.IncidentCause):
					// What the step did outside its branch was put back:
					// the branch may hold none of it (executor/step/guard).
					fmt.Fprintf(e.stdout, "  its branch %s holds only what was committed on it; anything its step moved elsewhere was put back, the moved value kept under a rescue ref named above when there was one", l.Branch)
				case !madeCommits(l):
					fmt.Fprintf(e.stdout, "  it recorded no commit (branch %s)", l.Branch)
				default:
					fmt.Fprintf(e.stdout, "  its work is on branch %s", l.Branch)
				}
				if l.Worktree != "" {
					fmt.Fprintf(e.stdout, " (worktree %s)", l.Worktree)
				}
				fmt.Fprintln(e.stdout)
			}
			// docs/running.md, "State and resume": handed-back, failed.
			fmt.Fprintf(e.stdout, "  cadence apply -replace %s %s runs it again (fix what the cause says first)\n", lp.ID, w.file)
		}
	}
}

// agentConfigLines prints, under the lot table, one line per lot whose
// commits add or change files an agent CLI loads as its configuration
// (state.Lot.AgentConfig): "a changes what the agent CLI loads:
// .mcp.json, web: .claude/settings.json".
func agentConfigLines(w io.Writer, p *planner.Plan, st *state.State) {
	for _, lp := range p.Lots {
		if l := st.Lots[lp.ID]; l != nil && len(l.AgentConfig) > 0 {
			fmt.Fprintf(w, "%s changes what the agent CLI loads: %s (check before you run it there)\n", lp.ID, strings.Join(l.AgentConfig, ", "))
		}
	}
}

// budgetHint says which ceiling suspended the wave and how to raise it.
func budgetHint(e *env, w *wave, p *planner.Plan, res executor.Result) {
	if res.Ceiling == executor.CeilingUSD {
		spent := res.State.Consumed.CostMicros
		fmt.Fprintf(e.stdout, "The dollar budget is spent (budget_usd %s; %s spent): raise it to resume, e.g. cadence apply -budget-usd %s %s\n",
			p.Totals.BudgetUSD, spec.USD(spent), usdHint(int64(p.Totals.BudgetUSD), spent), w.file)
		return
	}
	fmt.Fprintf(e.stdout, "The budget is spent: raise it to resume, e.g. cadence apply -budget %s %s\n", spec.Tokens(int64(p.Totals.Budget)*2), w.file)
}

// usdHint is the -budget-usd to suggest when budget (µ$) is spent, spent
// µ$ having gone: twice the budget, or, when more was spent, the spent
// amount plus the budget; in whole cents rounded up, above what was spent,
// and written without "$" (a shell reads "$0" in "$0.02" as its own name).
func usdHint(budget, spent int64) string {
	h := max(2*budget, spent+budget)
	if h <= spent {
		h = spent + 10_000
	}
	cents := (h + 9_999) / 10_000
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}

// ctxLive reports whether the run ended by itself (not interrupted as a
// whole): then each interrupted lot is worth its own line.
func ctxLive(res executor.Result) bool { return res.Status != state.WaveInterrupted }

// planHasAgents reports whether the run's end shows what only agent lots
// have (the PASSES, REVIEW and TOKENS columns, the budget line): some lot
// of the plan is an agent lot, or the state records tokens or dollars
// spent. A wave of command lots only is not padded with zeros.
func planHasAgents(p *planner.Plan, st *state.State) bool {
	for _, lp := range p.Lots {
		if lp.Kind == spec.AgentLot {
			return true
		}
	}
	return st.Consumed.Counted > 0 || st.Consumed.CostMicros > 0
}

// stateHasAgents reports whether status shows what only agent lots have
// (the TOKENS column, the budget line): the state records an agent step
// (any step but run, test and integrate) or tokens or dollars spent.
func stateHasAgents(st *state.State) bool {
	if st.Consumed.Counted > 0 || st.Consumed.CostMicros > 0 {
		return true
	}
	for _, l := range st.Lots {
		for _, s := range l.Steps {
			switch s.Kind {
			case state.StepRun, state.StepTest, state.StepIntegrate:
			default:
				return true
			}
		}
	}
	return false
}

// tokensColumn returns the tab-separated row of status's lot table (LOT
// STATUS STEP COMMITS TOKENS NOTE) without its TOKENS cell unless agents.
func tokensColumn(agents bool, row string) string {
	if agents {
		return row
	}
	cells := strings.Split(row, "\t")
	return strings.Join(append(cells[:4:4], cells[5:]...), "\t")
}

// budgetLine prints "Budget: 6k counted tokens spent of 1M (+6k cache
// reads), $0.012 of $5.00." (the ceilings when above zero: budget in
// counted tokens, budgetUSD in micro-dollars).
func budgetLine(w io.Writer, c state.Consumed, budget, budgetUSD int64) {
	fmt.Fprintf(w, "Budget: %s counted tokens spent", spec.Tokens(c.Counted))
	if budget > 0 {
		fmt.Fprintf(w, " of %s", spec.Tokens(budget))
	}
	fmt.Fprintf(w, " (+%s cache reads), %s", spec.Tokens(c.CacheRead), costText(c.CostMicros, c.CostEstimated))
	if budgetUSD > 0 {
		fmt.Fprintf(w, " of %s", spec.USD(budgetUSD))
	}
	fmt.Fprintln(w, ".")
}

// lotTable prints one row per lot of the plan from the state; without
// agents (planHasAgents) it leaves out the PASSES, REVIEW and TOKENS
// columns.
func lotTable(out io.Writer, p *planner.Plan, st *state.State, agents bool) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(cells ...string) {
		if !agents {
			// LOT STATUS PASSES REVIEW COMMITS TOKENS DURATION
			cells = []string{cells[0], cells[1], cells[4], cells[6]}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	row("LOT", "STATUS", "PASSES", "REVIEW", "COMMITS", "TOKENS", "DURATION")
	for _, lp := range p.Lots {
		l := st.Lots[lp.ID]
		if l == nil {
			row(lp.ID, planStatus(lp), "", "", "", "", "")
			continue
		}
		passes, review, commits := 0, "", 0
		var dur time.Duration
		for _, s := range l.Steps {
			if s.Kind == state.StepFix {
				passes = max(passes, s.Pass)
			}
			commits += s.CommitCount()
			if s.Ended != nil {
				dur += s.Ended.Sub(s.Started)
			}
		}
		review = verdictText(l)
		status := string(l.Status)
		if l.Status == state.LotBlocked && l.BlockedBy != "" {
			status += " (" + l.BlockedBy + ")"
		}
		row(lp.ID, status, strconv.Itoa(passes), review, strconv.Itoa(commits), spec.Tokens(l.Usage().Counted()).String(), spec.FormatDuration(dur))
	}
	tw.Flush()
}

func planStatus(lp planner.LotPlan) string {
	switch lp.Action {
	case planner.ActionBlocked:
		return "blocked (" + strings.Join(lp.BlockedBy, ", ") + ")"
	case planner.ActionAnswer:
		return "question"
	case planner.ActionRefused:
		return "refused (its toolchain: see the plan)"
	}
	return "queued"
}
