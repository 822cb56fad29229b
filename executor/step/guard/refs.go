package guard

import (
	"sort"
	"sync"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// Guarded refs (docs/integration.md, Guards; docs/decisions.md): before and after
// every step of a lot (agent session, command, test gate), cadence reads
// the guarded refs (refs/heads, refs/tags), cadence's own refs
// (refs/cadence: a move or deletion of one is foreign, a creation is not)
// and the stash entries of every repository of the wave, at most one git
// call per repository (none when the ref files can be read), and the HEAD
// of each of the lot's worktrees (from its files). A stash entry that was
// there before the step and is gone after it is put back (gitint.RestoreStash). After the step, a worktree that is no longer
// on the lot's branch is put back on it, and a guarded ref that moved and
// that cadence did not move itself is put back by compare-and-swap, its
// foreign value kept under refs/cadence/rescue/<wave>/<lot>/<n>. Either is
// an incident: the wave stops, and the lot's step ends failed naming what
// moved (the lot's own branch, and its commits, are never touched).
//
// cadence moves one guarded ref itself while steps run: the base, when a
// lot integrates (Advance, or Rewind to undo one). Those moves are made
// under the repository's ref ledger lock and recorded in the ledger; a
// step's check reads the refs under the same lock and replays the moves
// recorded since its first reading, so an integration that ran during the
// step (a neighbour lot's) is never taken for a foreign move, and a
// foreign move is put back to where cadence's own moves left the ref. (The
// ledger is in-process: only one wave runs in a repository at a time, and
// only its integrations move its base.)

// IncidentCause starts the cause of a step (and so of its lot) that ended
// on a guarded-ref incident: what moved was put back, so the lot's branch
// may hold none of what the step did.
const IncidentCause = "incident: "

// refLedger is the wave's record of the guarded-ref moves cadence made
// itself, per repository.
type refLedger struct {
	mu    sync.Mutex
	repos map[*spec.Repo]*repoLedger
}

// repoLedger is one repository's ledger: mu is held while a step's guard
// reads or puts back the refs and while cadence moves the base.
type repoLedger struct {
	mu    sync.Mutex
	moves []OwnMove
	// told are the lead's moves the journal has said ("<ref> <new>").
	told map[string]bool
}

// OwnMove is a move cadence made itself, for the integration of Lot.
type OwnMove struct {
	gitint.RefMove
	Lot string
}

// of returns the repository's ledger, made on first use.
func (l *refLedger) of(rp *spec.Repo) *repoLedger {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.repos == nil {
		l.repos = map[*spec.Repo]*repoLedger{}
	}
	rl := l.repos[rp]
	if rl == nil {
		rl = &repoLedger{}
		l.repos[rp] = rl
	}
	return rl
}

// own runs move, a move of the repository's guarded refs by cadence itself
// (the base's Advance or Rewind for lot), under the ledger's lock, and
// records what it returns (a zero RefMove, or one whose Old equals New,
// records nothing).
func (l *refLedger) own(rp *spec.Repo, lot string, move func() gitint.RefMove) {
	rl := l.of(rp)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if m := move(); m.Ref != "" && m.Old != m.New {
		rl.moves = append(rl.moves, OwnMove{m, lot})
	}
}

// foreign compares a step's two readings of the refs: before (with pos,
// the ledger's length then) and after. A ref is expected where cadence's
// own moves since pos, replayed in order from its value before, leave it;
// a ref found elsewhere moved foreignly and is returned with Old set to
// that expected value (what it is put back to). onTop names, per ref, the
// lots that cadence integrated from a value it did not expect (on top of
// a foreign move). Call it with rl.mu held.
func (rl *repoLedger) foreign(before, after gitint.Refs, pos int) (moves []gitint.RefMove, onTop map[string][]string) {
	refs := map[string]bool{}
	for _, m := range before.Diff(after) {
		refs[m.Ref] = true
	}
	for _, o := range rl.moves[pos:] {
		refs[o.Ref] = true
	}
	for ref := range refs {
		want := before[ref]
		for _, o := range rl.moves[pos:] {
			switch {
			case o.Ref != ref:
			case o.Old == want:
				want = o.New
			default:
				if onTop == nil {
					onTop = map[string][]string{}
				}
				onTop[ref] = append(onTop[ref], o.Lot)
			}
		}
		if after[ref] != want {
			moves = append(moves, gitint.RefMove{Ref: ref, Old: want, New: after[ref]})
		}
	}
	sort.Slice(moves, func(i, j int) bool { return moves[i].Ref < moves[j].Ref })
	return moves, onTop
}
