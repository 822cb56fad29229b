package planner

import (
	"fmt"

	"github.com/cadence-run/cadence/spec"
)

// BrowserMachine is a Machine that also knows whether a UX review session
// (docs/ux.md) of an agent would get a browser on this machine.
type BrowserMachine interface {
	Machine
	// BrowserMissing says why a session of a would get no browser here
	// (the browser or the Playwright MCP server not found, with how to
	// install them; an agent kind with no browser in cadence); "" when it
	// would get one. The agent's adapter decides
	// (executor/agent.BrowserMissing).
	BrowserMissing(a *spec.Agent) string
}

// browsers warns of the pending lots whose UX review (spec.Lot.UXReview)
// would get no browser on the machine m, once per cause, naming the lots:
// their UX reviews end not verified and their verdicts are not used. An
// offline plan (m nil) and a Machine that is not a BrowserMachine check
// nothing.
func (b *builder) browsers(m Machine) {
	bm, ok := m.(BrowserMachine)
	if !ok {
		return
	}
	asked := map[*spec.Agent]string{}
	byCause := map[string][]string{}
	var order []string
	for _, l := range b.selected {
		if !b.actions[l].Action.Pending() || !l.UXReview() || l.ReviewAgent == nil {
			continue
		}
		a := l.ReviewAgent
		cause, seen := asked[a]
		if !seen {
			cause = bm.BrowserMissing(a)
			asked[a] = cause
		}
		if cause == "" {
			continue
		}
		if byCause[cause] == nil {
			order = append(order, cause)
		}
		byCause[cause] = append(byCause[cause], l.ID)
	}
	for _, cause := range order {
		lots := byCause[cause]
		b.warn(Warning{Kind: WarnNoBrowser, LotIDs: lots, Message: fmt.Sprintf(
			"no browser for the UX review of %s %s (%s): it will end not verified and its verdict will not be used (docs/ux.md, Install and cost)",
			map[bool]string{true: "lot", false: "lots"}[len(lots) == 1], shortList(lots, 5), cause)})
	}
}
