package guard

import (
	"context"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// ForQueue is the guard as the merge queue sees it (it implements
// mergequeue.Guard, which names lots by id): cadence's own moves of
// guarded refs and lot branches, the tips check before an integration,
// and the remotes' comparison around a gate. Lot finds a lot's branch and
// worktrees by id (ok false: a lot the run does not know, whose tips are
// not checked); Incident receives each incident found, which stops the
// wave. Both are the orchestrator's and must be safe for concurrent use.
type ForQueue struct {
	G        *Guard
	Lot      func(id string) (Lot, bool)
	Incident func(string)
}

// OwnMove records cadence's own move of repo's guarded refs (Guard.OwnMove).
func (q ForQueue) OwnMove(repo *spec.Repo, lot string, move func() gitint.RefMove) {
	q.G.OwnMove(repo, lot, move)
}

// Moving marks lot active while cadence moves its branch (Guard.Moving).
func (q ForQueue) Moving(lot string) (done func()) { return q.G.Moving(lot) }

// CheckTips checks that lot's branches are where its last step left them
// (Guard.CheckTips); each move found is put back and is an incident.
func (q ForQueue) CheckTips(ctx context.Context, lot string) {
	l, ok := q.Lot(lot)
	if !ok {
		return
	}
	for _, in := range q.G.CheckTips(ctx, l) {
		q.Incident(in)
	}
}

// CheckRemotes compares repos' remotes (Guard.CompareRemotes); a change is
// an incident, recorded as before + ", " + what changed, and returned with
// the lots whose command or test steps ran there since the last
// comparison.
func (q ForQueue) CheckRemotes(ctx context.Context, before string, repos []*spec.Repo) (string, []string) {
	msg, lots := q.G.CompareRemotes(ctx, repos)
	if msg != "" {
		q.Incident(before + ", " + msg)
	}
	return msg, lots
}
