package guard

import (
	"context"
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// The lead's checkout (docs/integration.md, Guards): a step outside an OS sandbox (a
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

// readCheckouts reads the status of the checkout of each of the lot's
// repositories; a repository whose status cannot be read is left out
// (said in notes).
func (g *Guard) readCheckouts(ctx context.Context, lot Lot, when string, notes *[]string) map[*spec.Repo]gitint.CheckoutStatus {
	out := map[*spec.Repo]gitint.CheckoutStatus{}
	for _, r := range lot.Repos {
		rp := r.Repo
		rl := g.refs.of(rp)
		rl.mu.Lock()
		st, err := g.git.CheckoutStatus(ctx, rp)
		rl.mu.Unlock()
		if err != nil {
			*notes = append(*notes, "cannot read the status of "+rp.Path+" "+when+" the step (it is not checked): "+err.Error())
			continue
		}
		out[rp] = st
	}
	return out
}

// checkCheckouts compares the checkouts' status after the step with
// before. A change holds the lot: it returns the cause the lot is held
// for and the lot's warning ("" when nothing changed), and a note for the
// journal; the step's own outcome is left as it is.
func (g *Guard) checkCheckouts(ctx context.Context, w *Watch, notes *[]string) (held, warning string) {
	if w.checkouts == nil {
		return "", ""
	}
	after := g.readCheckouts(ctx, w.lot, "after", notes)
	var found []string
	for _, r := range w.lot.Repos {
		rp := r.Repo
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
		return "", ""
	}
	msg := fmt.Sprintf("during its %s step, %s; the files are left as they are", w.kind, strings.Join(found, "; "))
	held = IncidentCause + msg + "; the lot is held, not integrated in this run (if you made these changes yourself: commit or stash the changes to tracked files, which integration refuses, then apply again; else look at them first)"
	*notes = append(*notes, "INCIDENT: lot "+w.lot.ID+": "+msg+"; the lot is held (the other lots go on)")
	return held, "INCIDENT: " + msg
}
