package executor

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
// its environment (state.GateKey; DESIGN.md §5): a tree that passed is
// never tested again, by the merge queue or by a lot's integration. The
// environment is what the lot's processes get from the lead and the wave
// file (the inherited environment, the lot's and repository's env, the
// toolchain), not cadence's own per-step variables (the guards, the
// process marks), which change nothing a test sees. A green result counts
// whenever it was recorded; a red one only within the run that recorded
// it, so that a red gate the lead reruns (after mending a flaky test, say)
// really runs.

// gateRun is one probe of the merge queue: the gate's verdict on the tip
// of a prefix of a batch, or why there is none (stop).
type gateRun struct {
	green bool
	msg   string
	stop  *queueResult
}

// gateDigest is the digest of the gate command of rp as the lot runs it:
// its command and environment (see above), hex.
func (lr *lotRun) gateDigest(rp *spec.Repo) string {
	tc := lr.r.toolchain(rp.Name)
	env := lotEnv(nil, lr.r.o.Env, lr.n.lot.Env, tc.ToolchainPath, tc.ToolchainEnv)
	env = append(slices.Clone(lr.r.o.Env), env...)
	slices.Sort(env)
	h := sha256.New()
	fmt.Fprintf(h, "%q\n", rp.Test)
	for _, e := range env {
		fmt.Fprintf(h, "%q\n", e)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// knownGate is the recorded result of rp's gate on tree for the lot's
// command and environment, if one counts (see above).
func (lr *lotRun) knownGate(rp *spec.Repo, tree string) (g state.Gate, ok bool) {
	key := state.GateKey(rp.Name, tree, lr.gateDigest(rp))
	lr.r.o.Store.View(func(st *state.State) { g, ok = st.Gates[key] })
	if ok && !g.Green && g.At.Before(lr.r.began) {
		return g, false
	}
	return g, ok
}

// recordGate records the result of rp's gate that the lot's last step ran
// on tree, covering lots.
func (lr *lotRun) recordGate(rp *spec.Repo, tree string, green bool, lots []string) error {
	key := state.GateKey(rp.Name, tree, lr.gateDigest(rp))
	step := 0
	lr.r.o.Store.View(func(st *state.State) {
		if l := st.Lots[lr.id]; l != nil {
			step = max(len(l.Steps)-1, 0)
		}
	})
	g := state.Gate{Repo: rp.Name, Tree: tree, Green: green, Lots: lots, At: lr.r.now().UTC(), Lot: lr.id, Step: step}
	return lr.r.o.Store.UpdateWave(func(st *state.State) {
		if st.Gates == nil {
			st.Gates = map[string]state.Gate{}
		}
		st.Gates[key] = g
	})
}

// treeOf is the tree checked out in the lot's worktree of rp, read before
// its own test gate runs: a green run is recorded for it (a gate that moves
// HEAD is red, shellIn), so that its integration does not test the same
// tree again. "" when it cannot be read (nothing is recorded then).
func (lr *lotRun) treeOf(ctx context.Context, rp *spec.Repo) string {
	tree, err := lr.r.o.Git.Tree(ctx, lr.dirs[rp])
	if err != nil {
		return ""
	}
	return tree
}

// gateOn runs rp's test gate on the tip of prefix (a batch's first lots,
// rebased in order), in its last lot's worktree, unless the tree's result
// is known; it says so in the journal, with the lots the run covers.
func (r *runner) gateOn(ctx context.Context, rp *spec.Repo, prefix []*queued) gateRun {
	last := prefix[len(prefix)-1]
	lr, dir := last.lr, last.lr.dirs[rp]
	ids := idsOf(prefix)
	tree, err := r.o.Git.Tree(ctx, dir)
	if err != nil {
		res := r.stopped(ctx, "cannot read the tree of the rebased branch: "+err.Error())
		return gateRun{stop: &res}
	}
	if g, ok := lr.knownGate(rp, tree); ok {
		r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: state.StepIntegrate, Message: fmt.Sprintf("test gate of repo %s on tree %s (lots %s): %s already, not run again", rp.Name, short(tree), lotIDsOf(ids), verdict(g.Green))})
		return gateRun{green: g.Green, msg: "red on this tree earlier in this run (lot " + g.Lot + "'s log)"}
	}
	began := time.Now()
	green, msg, err := lr.shellIn(ctx, state.StepTest, 0, rp.Test, rp.TestTimeout, dir, "")
	if err == nil && ctx.Err() == nil {
		r.queueOf(rp).noteGate(time.Since(began))
	}
	if o, ok := incidentOutcome(err); ok {
		return gateRun{stop: &queueResult{kind: queueIncident, outcome: o, lot: lr.id}}
	}
	if err != nil || ctx.Err() != nil {
		o, err := stopOutcome(ctx, err)
		if err != nil {
			return gateRun{stop: &queueResult{err: err}}
		}
		return gateRun{stop: &queueResult{kind: queueInterrupted, cause: o.Detail}}
	}
	if lr.held != "" {
		// The gate changed the lead's checkout: the batch integrates
		// nothing, the lot it ran in is held (checkoutguard.go).
		return gateRun{stop: &queueResult{kind: queueHeld, cause: lr.held, lot: lr.id}}
	}
	// A red run is recorded only for the tree it ran on: a gate that moved
	// HEAD is red (shellIn) without having tested anything for certain.
	if head, _ := r.o.Git.Head(ctx, dir); green || head == last.tip {
		if err := lr.recordGate(rp, tree, green, ids); err != nil {
			return gateRun{stop: &queueResult{err: err}}
		}
	}
	r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: state.StepIntegrate, Message: fmt.Sprintf("test gate of repo %s on tree %s covers lots %s: %s", rp.Name, short(tree), lotIDsOf(ids), verdict(green))})
	return gateRun{green: green, msg: msg}
}

func verdict(green bool) string {
	if green {
		return "green"
	}
	return "red"
}

// lotIDsOf names lot ids: "a, b and c".
func lotIDsOf(ids []string) string {
	if len(ids) < 2 {
		return strings.Join(ids, "")
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}
