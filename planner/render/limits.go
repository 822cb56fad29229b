package render

import (
	"sort"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// timeoutsSummary is the totals line of the step timeouts of the lots
// apply would run, grouped by value with the lots (or repositories, for
// test gates) each holds: `45m write, 25m read-only (a, b); run 30m
// (gen); test gates 30m (api)`. "" when nothing would run.
func timeoutsSummary(p *planner.Plan) string {
	type group struct {
		label string
		who   []string
	}
	var groups []*group
	add := func(label, who string) {
		for _, g := range groups {
			if g.label == label {
				g.who = append(g.who, who)
				return
			}
		}
		groups = append(groups, &group{label, []string{who}})
	}
	gated := map[string]bool{}
	for _, lp := range p.Lots {
		if !lp.Action.Pending() {
			continue
		}
		if lp.Kind == spec.CommandLot {
			add("run "+timeoutLabel(lp.Timeout), lp.ID)
		} else {
			add(timeoutLabel(lp.Timeout)+" write, "+timeoutLabel(lp.ReviewTimeout)+" read-only", lp.ID)
		}
		for _, r := range append([]string{lp.Repo}, lp.Also...) {
			gated[r] = true
		}
	}
	for _, r := range p.Repos {
		if gated[r.Name] && r.Test != "" {
			add("test gates "+timeoutLabel(r.TestTimeout), clip(r.Name, 40))
		}
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = g.label + " (" + strings.Join(capNames(g.who), ", ") + ")"
	}
	return strings.Join(capNames(parts), "; ")
}

// timeoutLabel is a timeout as the plan shows it; 0 is none.
func timeoutLabel(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return spec.FormatDuration(d)
}

// limitsSummary is the totals line of the step limits of the lots apply
// would run: each distinct set with its lots, then how this machine
// enforces each limit (an offline plan does not know). "" when no such
// lot sets a limit.
func limitsSummary(p *planner.Plan) string {
	byLimits := map[string][]string{}
	var order []string
	for _, lp := range p.Lots {
		if !lp.Action.Pending() || lp.Limits.IsZero() {
			continue
		}
		k := lp.Limits.String()
		if byLimits[k] == nil {
			order = append(order, k)
		}
		byLimits[k] = append(byLimits[k], lp.ID)
	}
	if len(order) == 0 {
		return ""
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, k+" ("+strings.Join(capNames(byLimits[k]), ", ")+")")
	}
	s := strings.Join(capNames(parts), "; ")
	if p.Offline {
		return s + "; enforcement not checked (offline plan)"
	}
	how := map[proc.Mechanism][]string{}
	var none []string
	for _, e := range p.Totals.LimitsEnforced {
		if e.Mechanism == proc.MechanismNone {
			none = append(none, string(e.Limit)+" ("+e.Why+")")
			continue
		}
		how[e.Mechanism] = append(how[e.Mechanism], string(e.Limit))
	}
	var mechs []string
	for m := range how {
		mechs = append(mechs, string(m))
	}
	sort.Strings(mechs)
	for _, m := range mechs {
		s += "; " + m + ": " + strings.Join(how[proc.Mechanism(m)], ", ")
	}
	if len(none) > 0 {
		s += "; not enforced here: " + strings.Join(none, ", ")
	}
	return s
}

// capNames keeps the first 5 names (or groups) of a long list and says
// how many more.
func capNames(ids []string) []string {
	if len(ids) <= 5 {
		return ids
	}
	return append(ids[:5:5], "and "+thousands(len(ids)-5)+" more")
}
