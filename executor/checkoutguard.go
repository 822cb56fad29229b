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
// command, a test gate, a worktree's setup, a session of an agent with
// sandbox = false) can write anywhere the user can, the lead's checkout
// included. Before and after such a step, cadence reads the status of the
// checkout of each of the lot's repositories (repo.Path: one git status
// each, tracked changes, the index and untracked files; editors' scratch
// files left out, gitint.Changes), under the repository's ref ledger lock,
// so that cadence's own fast-forward of that checkout is never seen half
// done. A change is an incident of the lot that ran the step: it is named
// in the journal and in the lot's warnings, the files are left as they are
// (never reset), and the lot is held: it ends interrupted at its next step
// boundary, its work kept and not integrated in this run; the next apply
// goes on with it. The lead may be editing the checkout at the same time,
// and nothing tells their change from the step's: so the rest of the wave
// goes on (a lead's edit costs at most the lots whose steps ran meanwhile
// an apply again), and the message says so.

// maxNamed bounds the files an incident names.
const maxNamed = 20

// guardsCheckout says whether a step of kind runs outside an OS sandbox:
// a command or a test gate, or a session of an agent with sandbox =
// false, whose sandbox this machine lacks (the plan's agent facts), or
// whose file tools run outside it (bypassPermissions).
func (lr *lotRun) guardsCheckout(kind state.StepKind) bool {
	if kind == state.StepRun || kind == state.StepTest {
		return true
	}
	a := lr.n.lot.Agent
	if a == nil || a.NoSandbox || a.SandboxBypass() != "" {
		return true
	}
	return lr.r.o.Plan != nil && lr.r.o.Plan.Agent.SandboxMissing != ""
}

// readCheckouts reads the status of the checkout of each of the lot's
// repositories; a repository whose status cannot be read is left out
// (said in the journal).
func (lr *lotRun) readCheckouts(ctx context.Context, when string) map[*spec.Repo]gitint.CheckoutStatus {
	out := map[*spec.Repo]gitint.CheckoutStatus{}
	for _, rp := range lr.n.lot.Repos() {
		rl := lr.r.refs.of(rp)
		rl.mu.Lock()
		st, err := lr.r.o.Git.CheckoutStatus(ctx, rp)
		rl.mu.Unlock()
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
	msg := fmt.Sprintf("during its %s step, %s; the files are left as they are", w.kind, strings.Join(found, "; "))
	lr.held = IncidentCause + msg + "; the lot is held, not integrated in this run (if you made these changes yourself: commit or stash the changes to tracked files, which integration refuses, then apply again; else look at them first)"
	lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "INCIDENT: lot " + lr.id + ": " + msg + "; the lot is held (the other lots go on)"})
	_ = lr.warn("INCIDENT: " + msg)
}
