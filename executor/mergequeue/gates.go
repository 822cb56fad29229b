package mergequeue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Test gate results are keyed by the tree the gate ran on, its command and
// its environment (state.GateKey; docs/integration.md, Merge queue): a
// tree that passed is never tested again, by the merge queue or by a lot's
// integration. The environment is what the lot's processes get from the
// lead and the wave file (Repo.GateEnv), not cadence's own per-step
// variables (the guards, the process marks), which change nothing a test
// sees. A green result counts whenever it was recorded; a red one only
// within the run that recorded it, so that a red gate the lead reruns
// (after mending a flaky test, say) really runs.

// GateDigest is the digest of a test gate command as a lot runs it: its
// command and environment (in any order), 16 hex digits.
func GateDigest(test string, env []string) string {
	env = slices.Clone(env)
	slices.Sort(env)
	h := sha256.New()
	fmt.Fprintf(h, "%q\n", test)
	for _, e := range env {
		fmt.Fprintf(h, "%q\n", e)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// KnownGate is the recorded result of repo's gate on tree, if one counts
// (see above).
func (q *Queue) KnownGate(repo Repo, tree string) (g state.Gate, ok bool) {
	key := state.GateKey(repo.Spec.Name, tree, GateDigest(repo.Spec.Test, repo.GateEnv))
	q.c.Store.View(func(st *state.State) { g, ok = st.Gates[key] })
	if ok && !g.Green && g.At.Before(q.c.Began) {
		return g, false
	}
	return g, ok
}

// RecordGate records the result of repo's gate that lot's last step ran
// on tree, covering lots.
func (q *Queue) RecordGate(lot string, repo Repo, tree string, green bool, lots []string) error {
	key := state.GateKey(repo.Spec.Name, tree, GateDigest(repo.Spec.Test, repo.GateEnv))
	step := 0
	q.c.Store.View(func(st *state.State) {
		if l := st.Lots[lot]; l != nil {
			step = max(len(l.Steps)-1, 0)
		}
	})
	g := state.Gate{Repo: repo.Spec.Name, Tree: tree, Green: green, Lots: lots, At: q.c.Now().UTC(), Lot: lot, Step: step}
	return q.c.Store.UpdateWave(func(st *state.State) {
		if st.Gates == nil {
			st.Gates = map[string]state.Gate{}
		}
		st.Gates[key] = g
	})
}

// tested reports whether the commit checked out in repo's worktree passed
// its test gate: its tree has a green result, or (not rebased: the commit
// is the one its steps left) a test step of that repository recorded the
// commit. A branch rebased by a cadence that was killed before testing it
// is tested again, unless its tree passed.
func (q *Queue) tested(ctx context.Context, lot string, repo Repo, rebased bool) bool {
	head, err := q.c.Git.Head(ctx, repo.Worktree)
	if err != nil {
		return false
	}
	if tree, err := q.c.Git.Tree(ctx, repo.Worktree); err == nil {
		if g, known := q.KnownGate(repo, tree); known && g.Green {
			return true
		}
	}
	ok := false
	q.c.Store.View(func(st *state.State) {
		l := st.Lots[lot]
		if l == nil || rebased {
			return
		}
		for _, s := range l.Steps {
			if s.Kind == state.StepTest && s.Status == state.StepOK && s.Repo == repo.Label && s.HeadAfter == head {
				ok = true
			}
		}
	})
	return ok
}

// probe is one probe of a batch: the gate's verdict on the tip of a
// prefix of the batch, or why there is none (stop).
type probe struct {
	green bool
	msg   string
	stop  *Result
}

// gateOn runs rp's test gate on the tip of prefix (a batch's first lots,
// rebased in order), in its last lot's worktree, unless the tree's result
// is known; it says so in the journal, with the lots the run covers.
func (q *Queue) gateOn(ctx context.Context, rp *spec.Repo, prefix []*queued) probe {
	last := prefix[len(prefix)-1]
	repo := last.lot.own()
	ids := idsOf(prefix)
	tree, err := q.c.Git.Tree(ctx, repo.Worktree)
	if err != nil {
		res := stopped(ctx, "cannot read the tree of the rebased branch: "+err.Error())
		return probe{stop: &res}
	}
	if g, ok := q.KnownGate(repo, tree); ok {
		q.c.Note(last.lot.ID, state.StepIntegrate, fmt.Sprintf("test gate of repo %s on tree %s (lots %s): %s already, not run again", rp.Name, short(tree), Names(ids), verdict(g.Green)))
		return probe{green: g.Green, msg: "red on this tree earlier in this run (lot " + g.Lot + "'s log)"}
	}
	began := time.Now()
	g, err := q.c.Gates.Test(ctx, last.lot.ID, repo)
	if err != nil {
		return probe{stop: &Result{err: err}}
	}
	switch g.Status {
	case GateIncident:
		return probe{stop: &Result{Kind: Incident, Incident: g.Incident, lot: last.lot.ID}}
	case GateInterrupted:
		return probe{stop: &Result{Kind: Interrupted, Cause: g.Cause}}
	}
	q.NoteGate(rp, time.Since(began))
	if g.Status == GateHeld {
		// The gate changed the lead's checkout: the batch integrates
		// nothing, the lot it ran in is held.
		return probe{stop: &Result{Kind: held, Cause: g.Cause, lot: last.lot.ID}}
	}
	green := g.Status == GateGreen
	// A red run is recorded only for the tree it ran on: a gate that moved
	// HEAD is red without having tested anything for certain.
	if head, _ := q.c.Git.Head(ctx, repo.Worktree); green || head == last.tip {
		if err := q.RecordGate(last.lot.ID, repo, tree, green, ids); err != nil {
			return probe{stop: &Result{err: err}}
		}
	}
	q.c.Note(last.lot.ID, state.StepIntegrate, fmt.Sprintf("test gate of repo %s on tree %s covers lots %s: %s", rp.Name, short(tree), Names(ids), verdict(green)))
	return probe{green: green, msg: g.Cause}
}

func verdict(green bool) string {
	if green {
		return "green"
	}
	return "red"
}

// Names names lot ids: "a, b and c".
func Names(ids []string) string {
	if len(ids) < 2 {
		return strings.Join(ids, "")
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}
