package state

import (
	"fmt"
	"time"
)

// Stack records that a lot's branch was rebased, by an integration batch
// (the merge queue, executor/batch.go), onto Onto: the tip of the lots
// ahead of it in the batch, which is not on the base yet. Tip is where the
// branch was before (the lot's own commits on an older base).
//
// It is recorded before the rebase and cleared once the batch is settled
// (the lot integrated, or its branch put back at Tip), so that whichever
// moment cadence dies at, the next apply knows the lot's own commits are
// Onto..branch, never another lot's: it puts the branch back at Tip when
// Onto did not reach the base (executor: settleStack). Both are full
// object ids.
type Stack struct {
	Onto string `json:"onto"`
	Tip  string `json:"tip"`
}

// Gate is one recorded run of a repository's test gate: on which tree,
// green or red, covering which lots (the lots whose changes the tree
// holds and whose integration it decides; one lot for a lot's own test
// step), and when. State.Gates keys it by GateKey.
type Gate struct {
	Repo  string    `json:"repo"`
	Tree  string    `json:"tree"`
	Green bool      `json:"green"`
	Lots  []string  `json:"lots,omitempty"`
	At    time.Time `json:"at"`
	// Lot and Step name the step whose log holds the run's output.
	Lot  string `json:"lot,omitempty"`
	Step int    `json:"step"`
}

// GateKey keys a gate result: the repository, the tree id the gate ran
// on, and env, the digest of the gate's command and environment
// (executor: gateDigest). The same three never need a second run
// (docs/integration.md, "Merge queue": gate results are keyed by tree
// id, so no tree is tested twice).
func GateKey(repo, tree, env string) string {
	return fmt.Sprintf("%s %s %s", repo, tree, env)
}

// validateQueue checks a lot's Stacked and the state's Gates.
func validateQueue(st *State, bad func(string, ...any)) {
	for id, l := range st.Lots {
		if l != nil && l.Stacked != nil && (!objectID(l.Stacked.Onto) || !objectID(l.Stacked.Tip)) {
			bad("lot %q: stacked onto and tip must be full object ids (40 or 64 hex digits), got %q and %q", id, l.Stacked.Onto, l.Stacked.Tip)
		}
	}
	for k, g := range st.Gates {
		if g.Repo == "" || !objectID(g.Tree) {
			bad("gate %q: needs a repo and a full tree id", k)
		}
		if g.Step < 0 {
			bad("gate %q: step must not be negative", k)
		}
	}
}
