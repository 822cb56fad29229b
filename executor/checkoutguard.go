package executor

import (
	"context"
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// The lead's checkout (README "Guards"): a step outside an OS sandbox (a
// command, a test gate, a session of an agent with sandbox = false) can
// write anywhere the user can, the lead's checkout included. Before and
// after such a step, cadence reads the status of the checkout of each of
// the lot's repositories (repo.Path: one git status each, tracked
// changes, the index and untracked files). A change is an incident that
// names the files: the wave stops, the files are left as they are (never
// reset) and the lot is not failed. The lead may be editing the checkout
// at the same time, and nothing tells their change from the step's: the
// incident says so, and applying again goes on from there.

// maxNamed bounds the files an incident names.
const maxNamed = 20

// guardsCheckout says whether a step of kind runs outside an OS sandbox:
// a command or a test gate, or a session of an agent with sandbox = false.
func (lr *lotRun) guardsCheckout(kind state.StepKind) bool {
	if kind == state.StepRun || kind == state.StepTest {
		return true
	}
	a := lr.n.lot.Agent
	return a == nil || a.NoSandbox
}

// readCheckouts reads the status of the checkout of each of the lot's
// repositories; a repository whose status cannot be read is left out
// (said in the journal).
func (lr *lotRun) readCheckouts(ctx context.Context, when string) map[*spec.Repo]gitint.CheckoutStatus {
	out := map[*spec.Repo]gitint.CheckoutStatus{}
	for _, rp := range lr.n.lot.Repos() {
		st, err := lr.r.o.Git.CheckoutStatus(ctx, rp)
		if err != nil {
			lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "cannot read the status of " + rp.Path + " " + when + " the step (it is not checked): " + err.Error()})
			continue
		}
		out[rp] = st
	}
	return out
}

// checkCheckouts compares the checkouts' status after the step with
// before, and reports a change as the wave's incident. It returns nothing:
// the step's own outcome is left as it is.
func (lr *lotRun) checkCheckouts(ctx context.Context, w *stepWatch) {
	if w.checkouts == nil {
		return
	}
	after := lr.readCheckouts(ctx, "after")
	var found []string
	for _, rp := range lr.n.lot.Repos() {
		before, ok1 := w.checkouts[rp]
		now, ok2 := after[rp]
		if !ok1 || !ok2 {
			continue
		}
		changes := before.Changes(now)
		if len(changes) == 0 {
			continue
		}
		var names []string
		for k, c := range changes {
			if k == maxNamed {
				names = append(names, fmt.Sprintf("and %d more", len(changes)-maxNamed))
				break
			}
			names = append(names, c.Path+" ("+c.How+")")
		}
		found = append(found, fmt.Sprintf("the lead's checkout %s changed: %s", rp.Path, strings.Join(names, ", ")))
	}
	if len(found) == 0 {
		return
	}
	lr.r.incident(fmt.Sprintf("lot %s: during its %s step, %s; the files are left as they are (if you made these changes yourself, nothing was undone: commit or stash the changes to tracked files, which apply refuses, then apply again)",
		lr.id, w.kind, strings.Join(found, "; ")))
}
