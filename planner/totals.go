package planner

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// totals sums the plan up and estimates its duration.
func (b *builder) totals() {
	t := &b.plan.Totals
	t.Lots = len(b.plan.Lots)
	t.ByAction = map[Action]int{}
	t.Budget = b.cfg.Wave.Budget
	if b.opts.Budget > t.Budget {
		t.Budget = b.opts.Budget
	}
	t.BudgetUSD = b.cfg.Wave.BudgetUSD
	if b.opts.BudgetUSD > t.BudgetUSD {
		t.BudgetUSD = b.opts.BudgetUSD
	}
	t.Spent, t.SpentMicro, t.SpentEstimated = b.st.Consumed.Counted, b.st.Consumed.CostMicros, b.st.Consumed.CostEstimated
	t.MaxSessions, t.Jobs = b.maxSessions(), b.jobs()
	t.SessionsFrom, t.JobsFrom = b.maxSessionsFrom(), b.jobsFrom()
	perRepo := map[*spec.Repo]int{}
	cmdPerRepo := map[*spec.Repo]int{}
	cmdNoRepo := 0
	var pending []*simLot
	for _, l := range b.selected {
		lp := b.actions[l]
		t.ByAction[lp.Action]++
		if !lp.Action.Pending() {
			continue
		}
		pending = append(pending, &simLot{lot: l, prio: lp.Remaining})
		if lp.Remaining > t.CriticalPath {
			t.CriticalPath = lp.Remaining
		}
		if l.Kind == spec.CommandLot {
			t.PendingCommand++
			if l.Repo != nil {
				cmdPerRepo[l.Repo]++
			} else {
				cmdNoRepo++
			}
			continue
		}
		t.PendingAgent++
		if l.Repo != nil {
			perRepo[l.Repo]++
		}
		if l.Budget > 0 {
			// What the lot may still spend: its budget less what it spent.
			t.Ceiling += max(0, l.Budget-spec.Tokens(lp.Spent))
		} else {
			t.Unbounded++
		}
	}
	// (An agent lot always has a repository: spec refuses one without.)
	t.Agents = b.concurrency(perRepo, 0)
	t.Commands = b.concurrency(cmdPerRepo, cmdNoRepo)
	t.Holds = b.holds
	t.Sessions = t.Agents.At(max(0, t.MaxSessions-t.Holds))
	// The estimate assumes at least one session: with the cap all held,
	// nothing starts until a hold ends.
	t.Estimate = simulate(pending, max(1, t.MaxSessions-t.Holds), t.Jobs)
}

// concurrency sums up how many lots of one kind can run at once: perRepo
// are the pending lots of the kind by their own repository, noRepo those
// without one.
func (b *builder) concurrency(perRepo map[*spec.Repo]int, noRepo int) Concurrency {
	c := Concurrency{Pending: noRepo, Allowed: noRepo}
	for _, r := range b.cfg.Repos {
		n := perRepo[r]
		if n == 0 {
			continue
		}
		c.Pending += n
		c.Allowed += min(n, r.Parallel)
		c.Repos = append(c.Repos, RepoConcurrency{Name: r.Name, Parallel: r.Parallel, Pending: n})
	}
	return c
}

// warnings adds what the lead should know about budget, state and overlaps.
func (b *builder) warnings() {
	t := b.plan.Totals
	switch {
	case t.Budget > 0 && t.Spent >= int64(t.Budget) && t.PendingAgent > 0:
		b.warn(Warning{Kind: WarnBudget, Refuses: true, Message: fmt.Sprintf(
			"the wave has spent %s of its %s budget: no session can start; raise it with apply -budget N", spec.Tokens(t.Spent), t.Budget)})
	case t.BudgetUSD > 0 && t.SpentMicro >= int64(t.BudgetUSD) && t.PendingAgent > 0:
		b.warn(Warning{Kind: WarnBudget, Refuses: true, Message: fmt.Sprintf(
			"the wave has spent %s of its %s dollar budget (budget_usd): no session can start; raise it with apply -budget-usd N", spec.USD(t.SpentMicro), t.BudgetUSD)})
	case t.Budget > 0 && t.Unbounded == 0 && int64(t.Ceiling)+t.Spent > int64(t.Budget):
		spent := ""
		if t.Spent > 0 {
			spent = fmt.Sprintf(" (plus %s spent)", spec.Tokens(t.Spent))
		}
		b.warn(Warning{Kind: WarnBudget, Message: fmt.Sprintf(
			"lot budgets add up to %s%s, above the wave budget of %s: the wave may suspend before every lot is done", t.Ceiling, spent, t.Budget)})
	}
	if b.st.WaveDigest != "" && b.opts.WaveDigest != "" && b.st.WaveDigest != b.opts.WaveDigest {
		b.warn(Warning{Kind: WarnWaveChanged, Message: "the wave file changed since the state was written: done lots stay done; changed briefs apply to steps not yet run"})
	}
	var stale []string
	for id := range b.st.Lots {
		if b.cfg.Lot(id) == nil {
			stale = append(stale, id)
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		b.warn(Warning{Kind: WarnStaleState, LotIDs: stale, Message: fmt.Sprintf(
			"the state file records lot(s) the wave file no longer declares: %s (their branches are kept)", shortList(stale, 5))})
	}
	b.overlaps()
}

// pathRE finds file paths named in briefs: at least one folder and an extension.
var pathRE = regexp.MustCompile(`[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+\.[A-Za-z0-9]+`)

// maxOverlapWarnings bounds the overlap warnings of a big wave.
const maxOverlapWarnings = 20

// maxOverlapPerPath spreads the warnings over files rather than pairing one
// lot with every other that names the same file.
const maxOverlapPerPath = 3

// maxOverlapChecks bounds the pairs checked for an ordering (each check walks
// the graph), so a huge wave naming one file everywhere stays linear.
const maxOverlapChecks = 200

// overlaps warns about pending agent lots of one repository that may run at
// the same time (neither depends on the other) and whose briefs name the same
// file: their integrations are likely to conflict.
func (b *builder) overlaps() {
	type key struct {
		repo *spec.Repo
		path string
	}
	byPath := map[key][]*spec.Lot{}
	var keys []key
	for _, l := range b.selected {
		if l.Kind != spec.AgentLot || l.Repo == nil || l.Repo.Parallel < 2 || !b.actions[l].Action.Pending() || l.Sensitive.Has("brief") {
			continue
		}
		seen := map[string]bool{}
		for _, p := range pathRE.FindAllString(l.Brief, 50) {
			if seen[p] {
				continue
			}
			seen[p] = true
			k := key{l.Repo, p}
			if byPath[k] == nil {
				keys = append(keys, k)
			}
			byPath[k] = append(byPath[k], l)
		}
	}
	g := b.cfg.Graph()
	reported := map[string]bool{}
	n, checks := 0, 0
	for _, k := range keys {
		lots, perPath := byPath[k], 0
		for i := 0; i < len(lots) && n < maxOverlapWarnings && checks < maxOverlapChecks && perPath < maxOverlapPerPath; i++ {
			for j := i + 1; j < len(lots) && n < maxOverlapWarnings && checks < maxOverlapChecks && perPath < maxOverlapPerPath; j++ {
				a, c := lots[i], lots[j]
				pair := a.ID + "\x00" + c.ID
				if reported[pair] {
					continue
				}
				checks++
				if ordered(g.Ancestors(c), a) || ordered(g.Ancestors(a), c) {
					continue
				}
				reported[pair] = true
				n++
				perPath++
				b.warn(Warning{Kind: WarnOverlap, Subject: k.repo.Name, LotIDs: []string{a.ID, c.ID}, Files: []string{k.path},
					Message: fmt.Sprintf("lots %s and %s may run at the same time in repo %s and both name %s: expect a conflict at integration (add depends_on to order them)", a.ID, c.ID, k.repo.Name, k.path)})
			}
		}
	}
}

func ordered(ancestors []*spec.Lot, l *spec.Lot) bool {
	for _, a := range ancestors {
		if a == l {
			return true
		}
	}
	return false
}

// Refusals returns the warnings apply refuses to start with.
func (p *Plan) Refusals() []Warning {
	var out []Warning
	for _, w := range p.Warnings {
		if w.Refuses {
			out = append(out, w)
		}
	}
	return out
}

// Summary is one line: the lots per action, in the words of Words, a held
// lot counted under its status ("1 handed back, 2 failed").
func (p *Plan) Summary() string {
	var parts []string
	add := func(n int, words string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, words))
		}
	}
	for _, a := range Actions {
		if a != ActionHeld {
			add(p.Totals.ByAction[a], a.Words())
			continue
		}
		failed := 0
		for i := range p.Lots {
			if p.Lots[i].Action == ActionHeld && p.Lots[i].HeldStatus == state.LotFailed {
				failed++
			}
		}
		add(p.Totals.ByAction[a]-failed, "handed back")
		add(failed, "failed")
	}
	if len(parts) == 0 {
		return "no lots"
	}
	return strings.Join(parts, ", ")
}
