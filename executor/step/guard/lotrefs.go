package guard

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// Lot branches (refs/heads/<namespace>/<lot>, planner.LotBranch) during a
// step: only the stepping lot's own branch, and the branches of lots that
// are active at the same time, may move. Each lot has an activity
// generation, bumped when any step of the lot starts or ends and when
// cadence itself works on the lot's branch (making its worktree, the
// replay's reset, the integration's rebase). After a step, another lot's
// branch that moved while that lot had nothing running (no step at the
// step's start, the same generation at its end) moved foreignly. The
// stepping lot's own branch must be where its worktree's git left it: a
// move of it that its worktree's HEAD reflog does not show (made from
// another worktree, or by writing the ref file) is foreign too. Foreign
// moves are put back like those of guarded refs (gitint.RestoreRefs), an
// incident naming the lots.

// lotActivity counts, per lot, the steps (and cadence's own works on the
// lot's branch) running, and their generation.
type lotActivity struct {
	mu     sync.Mutex
	gen    map[string]uint64
	active map[string]int
}

// lotGen is a lot's activity at one moment.
type lotGen struct {
	gen    uint64
	active bool
}

// busy marks the lot active (its generation bumped) until the returned
// func is called (bumped again).
func (a *lotActivity) busy(id string) func() {
	a.bump(id, 1)
	var once sync.Once
	return func() { once.Do(func() { a.bump(id, -1) }) }
}

func (a *lotActivity) bump(id string, d int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gen == nil {
		a.gen, a.active = map[string]uint64{}, map[string]int{}
	}
	a.gen[id]++
	a.active[id] += d
}

// snapshot is every lot's activity now.
func (a *lotActivity) snapshot() map[string]lotGen {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]lotGen, len(a.gen))
	for id, g := range a.gen {
		out[id] = lotGen{g, a.active[id] > 0}
	}
	return out
}

// lotRefPrefix is the prefix of the wave's lot branches: the folder of
// the lot's own, refs/heads/<namespace>/ (every lot of a wave has its
// branch in one namespace: planner's branches.go).
func lotRefPrefix(lot Lot) string {
	return "refs/heads/" + path.Dir(lot.Branch) + "/"
}

// readRefs reads a repository's refs (one git call) and splits them: the
// guarded refs without the wave's lot branches, and the lot branches.
func (g *Guard) readRefs(ctx context.Context, lot Lot, rp *spec.Repo) (guarded, lots gitint.Refs, err error) {
	all, err := g.git.Refs(ctx, rp, "")
	if err != nil {
		return nil, nil, err
	}
	prefix := lotRefPrefix(lot)
	guarded, lots = gitint.Refs{}, gitint.Refs{}
	for ref, sha := range all {
		if strings.HasPrefix(ref, prefix) {
			lots[ref] = sha
		} else {
			guarded[ref] = sha
		}
	}
	return guarded, lots, nil
}

// foreignLotMoves compares a step's two readings of the wave's lot
// branches: a branch other than own that moved while its lot had nothing
// running (acts0, at the step's start; acts1, at its end) is returned, Old
// its value before, with its lot's name.
func foreignLotMoves(prefix, own string, before, after gitint.Refs, acts0, acts1 map[string]lotGen) (moves []gitint.RefMove, lots map[string]string) {
	for _, m := range before.Diff(after) {
		if m.Ref == own {
			continue
		}
		id := strings.TrimPrefix(m.Ref, prefix)
		if a0 := acts0[id]; a0.active || a0.gen != acts1[id].gen {
			continue
		}
		moves = append(moves, m)
		if lots == nil {
			lots = map[string]string{}
		}
		lots[m.Ref] = id
	}
	return moves, lots
}

// ownBranchMove says whether the lot's own branch moved, during its step,
// other than its worktree's git moved it: expected is where the branch
// should be (before, or the worktree's newest HEAD reflog entry when the
// worktree moved HEAD during the step); a branch found elsewhere is a
// foreign move back to expected. No reflog (tipAfter ""): nothing to say.
func ownBranchMove(ref, before, after, tipBefore, tipAfter string) (gitint.RefMove, bool) {
	if tipAfter == "" {
		return gitint.RefMove{}, false
	}
	expected := before
	if tipAfter != tipBefore {
		expected = tipAfter
	}
	if after == expected {
		return gitint.RefMove{}, false
	}
	return gitint.RefMove{Ref: ref, Old: expected, New: after}, true
}

// checkLotRefs is After's check of the wave's lot branches in the
// repository r (Dir "": one of the wave's that is not the lot's): the foreign moves (foreignLotMoves, ownBranchMove) are
// put back and described for the incident. headMoved says the worktree's
// HEAD was put back already (its reflog then says nothing of the branch).
func (g *Guard) checkLotRefs(ctx context.Context, w *Watch, r Repo, after gitint.Refs, headMoved bool) []string {
	rp, lot := r.Repo, w.lot
	before := w.lotRefs[rp]
	if before == nil {
		return nil
	}
	acts1 := g.lots.snapshot()
	own := "refs/heads/" + lot.Branch
	if r.Dir == "" {
		// Not one of the lot's repositories: its branch there, if any,
		// is no more the step's than another lot's.
		own = ""
	}
	moves, lots := foreignLotMoves(lotRefPrefix(lot), own, before, after, w.acts, acts1)
	if own != "" {
		g.setTip(lot.ID, rp, after[own])
	}
	if own != "" && !headMoved {
		if m, ok := ownBranchMove(own, before[own], after[own], w.logTips[rp], g.git.HeadLogTip(r.Dir)); ok {
			moves = append(moves, m)
		}
	}
	if len(moves) == 0 {
		return nil
	}
	others := othersDuring(lot.ID, w.acts, acts1)
	running := "no other lot had a step running"
	if len(others) > 0 {
		running = "lots with steps running meanwhile: " + strings.Join(others, ", ")
	}
	sort.Slice(moves, func(i, j int) bool { return moves[i].Ref < moves[j].Ref })
	var found []string
	for _, p := range g.git.RestoreRefs(ctx, rp, g.wave, lot.ID, moves) {
		if own != "" && p.Ref == own && p.Err == nil {
			g.setTip(lot.ID, rp, p.Old)
		}
		var what string
		if id, ok := lots[p.Ref]; ok {
			what = fmt.Sprintf("in repo %s, the branch of lot %s, which had no step running, %s (%s)", rp.Name, id, p.String(), running)
		} else {
			what = fmt.Sprintf("in repo %s, the lot's own branch moved other than by git in its worktree (%s): %s", rp.Name, running, p.String())
		}
		found = append(found, what)
	}
	return found
}

// othersDuring are the lots other than lot that were active at some time
// between acts0 and acts1 (at the start and the end of lot's step),
// sorted.
func othersDuring(lot string, acts0, acts1 map[string]lotGen) []string {
	var others []string
	for id, a := range acts1 {
		if a0 := acts0[id]; id != lot && (a.active || a0.active || a.gen != a0.gen) {
			others = append(others, id)
		}
	}
	sort.Strings(others)
	return others
}

// setTip records where the lot's branch in rp is at the end of a step
// (checked before its next step: checkTip).
func (g *Guard) setTip(lot string, rp *spec.Repo, sha string) {
	g.tipsMu.Lock()
	defer g.tipsMu.Unlock()
	if g.tips[lot] == nil {
		g.tips[lot] = map[*spec.Repo]string{}
	}
	g.tips[lot][rp] = sha
}

// tip is where the lot's branch in rp was at the end of its last step
// (ok false when no step recorded it, or cadence moved it since).
func (g *Guard) tip(lot string, rp *spec.Repo) (string, bool) {
	g.tipsMu.Lock()
	defer g.tipsMu.Unlock()
	sha, ok := g.tips[lot][rp]
	return sha, ok
}

// checkTip checks, before a step, that the lot's branch in rp (lots, just
// read) is where its last step left it: a move made while no step of the
// lot ran is put back (rescue ref, compare-and-swap) and is an incident,
// returned. It returns the branch's value the step starts from.
func (g *Guard) checkTip(ctx context.Context, lot Lot, rp *spec.Repo, lots gitint.Refs) (string, string) {
	own := "refs/heads/" + lot.Branch
	tip, ok := g.tip(lot.ID, rp)
	if !ok || lots[own] == tip {
		return lots[own], ""
	}
	m := gitint.RefMove{Ref: own, Old: tip, New: lots[own]}
	p := g.git.RestoreRefs(ctx, rp, g.wave, lot.ID, []gitint.RefMove{m})[0]
	incident := fmt.Sprintf("lot %s: between its steps, while none of them ran, in repo %s, the lot's branch %s", lot.ID, rp.Name, p.String())
	if p.Err == nil {
		return tip, incident
	}
	return lots[own], incident
}

// CheckTips is checkTip for each of the lot's repositories before its
// integration (one git call each), when its last step recorded a tip. It
// returns the incidents found (the wave stops on them).
func (g *Guard) CheckTips(ctx context.Context, lot Lot) []string {
	ctx = context.WithoutCancel(ctx)
	var incidents []string
	for _, r := range lot.Repos {
		if _, ok := g.tip(lot.ID, r.Repo); !ok {
			continue
		}
		if _, lots, err := g.readRefs(ctx, lot, r.Repo); err == nil {
			if _, incident := g.checkTip(ctx, lot, r.Repo, lots); incident != "" {
				incidents = append(incidents, incident)
			}
		}
	}
	return incidents
}
