// Package guard checks what a step did outside its lot's worktrees: before
// and after any step (an agent session, a command, a test gate, a
// worktree's setup) it reads what the step must leave alone (guarded refs,
// the wave's lot branches, the worktrees' HEADs, the repositories' config,
// the lead's checkouts) and after it puts back what moved foreignly,
// returning the incident and what was put back (docs/integration.md,
// Guards). One Guard serves every lot of a wave: it keeps the ledger of
// cadence's own ref moves and every lot's activity, which the checks of
// concurrent steps share.
package guard

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// Git is what the guard needs of git (gitint.Repos, or a fake in tests).
type Git interface {
	// Refs reads the repository's guarded refs (refs/heads, refs/tags) and
	// cadence's own (refs/cadence) but those under the prefix skip, with
	// at most one git call (gitint.SnapshotRefs).
	Refs(ctx context.Context, repo *spec.Repo, skip string) (gitint.Refs, error)
	// RestoreRefs puts foreign moves of guarded refs back, each by
	// compare-and-swap to its Old value, keeping each foreign value under
	// the lot's next rescue ref first (gitint.RestoreRefs).
	RestoreRefs(ctx context.Context, repo *spec.Repo, wave, lot string, moves []gitint.RefMove) []gitint.PutBack
	// OutsideMoves are the updates of guarded refs made outside the wave
	// (by the lead) since the given time, as the guard's witness recorded
	// them, oldest first (gitint.OutsideMoves).
	OutsideMoves(ctx context.Context, repo *spec.Repo, since time.Time) []gitint.OutsideMove
	// Refusals takes the reports the guard's witness refused since last
	// asked: a step's process that posed as the lead (gitint.Refusals).
	Refusals(ctx context.Context, repo *spec.Repo) []gitint.Refusal
	// CheckoutStatus is the status of the repository's own checkout (the
	// lead's): tracked changes, the index, untracked files, one git
	// status (gitint.ReadCheckoutStatus).
	CheckoutStatus(ctx context.Context, repo *spec.Repo) (gitint.CheckoutStatus, error)
	// WorktreeHead is what the worktree at dir has checked out ("refs/heads/x",
	// or a commit when detached), read from its files (gitint.WorktreeHead).
	WorktreeHead(dir string) (string, error)
	// HeadLogTip is where the newest entry of the HEAD reflog of the
	// worktree at dir left HEAD, "" when there is none (gitint.HeadLogTip).
	HeadLogTip(dir string) string
	// PutOnBranch puts the worktree at dir back on branch, keeping a
	// detached HEAD's commit under the lot's next rescue ref first, and says
	// what it did (gitint.PutOnBranch).
	PutOnBranch(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot string) (string, error)
	// ConfigFiles reads the repository's config files as bytes
	// (gitint.ReadConfigFiles); after the first call per repository, no
	// git process.
	ConfigFiles(ctx context.Context, repo *spec.Repo) (gitint.ConfigFiles, error)
	// RestoreConfig puts back the config files that changed since before,
	// keeping each changed version under the lot's rescue folder
	// (gitint.RestoreConfig). No git process.
	RestoreConfig(before gitint.ConfigFiles, wave, lot string) []gitint.ConfigChange
	// GuardIntact says what is wrong with the repository's guard folder
	// ("" = intact), from its files (gitint.GuardIntact).
	GuardIntact(before gitint.ConfigFiles) string
	// RepairGuard reinstalls a damaged guard and says what was wrong
	// (gitint.RepairGuard).
	RepairGuard(ctx context.Context, repo *spec.Repo) (string, error)
	// Hooks reads the repository's hooks folders as bytes
	// (gitint.ReadHooks); after the first call per repository, no git
	// process.
	Hooks(ctx context.Context, repo *spec.Repo) (gitint.HookFiles, error)
	// RestoreHooks sets aside the hooks planted or changed since before
	// and puts back the hooks as they were (gitint.RestoreHooks). No git
	// process.
	RestoreHooks(before gitint.HookFiles, wave, lot string) []gitint.HookChange
	// Stash reads the repository's stash entries from its files, oldest
	// first (gitint.ReadStash); no git process.
	Stash(ctx context.Context, repo *spec.Repo) ([]gitint.StashEntry, error)
	// RestoreStash puts dropped stash entries back (gitint.RestoreStash).
	RestoreStash(ctx context.Context, repo *spec.Repo, entries []gitint.StashEntry) []gitint.StashPutBack
	// RemoteState describes the repository's remotes; a change across a
	// step means something was pushed.
	RemoteState(ctx context.Context, repo *spec.Repo) string
	// LocalRemoteState is what RemoteState can say without network and
	// with no git process after the first call per repository
	// (gitint.LocalRemoteState).
	LocalRemoteState(ctx context.Context, repo *spec.Repo) string
}

// Guard is one wave's guard: the ledger of cadence's own moves of guarded
// refs, every lot's activity, the repositories' config records, the
// remotes that command and test steps are compared against, and where
// each lot's branch was at the end of its last step. Its methods are safe
// for concurrent use by the steps of many lots.
type Guard struct {
	git  Git
	wave string
	// repos are the wave's repositories: every step's guard reads the
	// refs of each (docs/integration.md, Guards).
	repos   []*spec.Repo
	refs    refLedger
	lots    lotActivity
	configs configWatch
	hooks   hookWatch
	remotes remoteWatch
	tipsMu  sync.Mutex
	tips    map[string]map[*spec.Repo]string
}

// New makes the guard of the wave named wave, whose repositories are
// repos, reading git through g.
func New(g Git, wave string, repos []*spec.Repo) *Guard {
	return &Guard{git: g, wave: wave, repos: repos, tips: map[string]map[*spec.Repo]string{}}
}

// Lot is what the guard checks of one lot: its id, its branch (short
// name, refs/heads/ left out), and its repositories with their worktrees,
// the lot's own first.
type Lot struct {
	ID     string
	Branch string
	Repos  []Repo
}

// Repo is one repository of a lot and the lot's worktree of it.
type Repo struct {
	Repo *spec.Repo
	Dir  string
}

// Findings is what a check found. Incident is the step's incident ("" when
// nothing moved): what moved, not by cadence, and what was put back; the
// wave stops on it. Incidents are further incidents of the wave (the lot's
// branch moved between its steps). Held, when set, is the cause the lot is
// held for (a lead's checkout changed during the step), Warning the lot's
// warning for it. Notes are lines for the journal.
type Findings struct {
	Incident  string
	Incidents []string
	Held      string
	Warning   string
	Notes     []string
}

// OwnMove runs move, a move of the repository's guarded refs by cadence
// itself (the base's Advance or Rewind for lot), under the repository's
// ledger lock, and records what it returns (a zero RefMove, or one whose
// Old equals New, records nothing): the steps' checks running meanwhile do
// not take it for a foreign move.
func (g *Guard) OwnMove(rp *spec.Repo, lot string, move func() gitint.RefMove) {
	g.refs.own(rp, lot, move)
}

// OwnMoves are the moves of rp's guarded refs cadence recorded itself, in
// order, each with its lot.
func (g *Guard) OwnMoves(rp *spec.Repo) []OwnMove {
	rl := g.refs.of(rp)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return append([]OwnMove(nil), rl.moves...)
}

// Moving marks the lot active while cadence itself moves its branch (the
// worktrees' making, a replay's reset, an integration's rebase) until
// done is called: another lot's step does not take the move for a
// foreign one. The tips recorded at the end of the lot's last step no
// longer hold (ForgetTips).
func (g *Guard) Moving(lot string) (done func()) {
	g.ForgetTips(lot)
	return g.lots.busy(lot)
}

// BusyLots are the lots other than except that are active now (a step
// running, or cadence's own work on their branch: Busy, Moving), sorted.
func (g *Guard) BusyLots(except string) []string {
	var out []string
	for id, a := range g.lots.snapshot() {
		if a.active && id != except {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Busy marks the lot active until done is called, keeping its tips.
func (g *Guard) Busy(lot string) (done func()) { return g.lots.busy(lot) }

// ForgetTips forgets where the lot's branch was at the end of its last
// step: cadence moved it itself since.
func (g *Guard) ForgetTips(lot string) {
	g.tipsMu.Lock()
	defer g.tipsMu.Unlock()
	delete(g.tips, lot)
}

// WatchRemotes reads the remotes of repos, the repositories command or
// test steps may use, once at the wave's start (remoteWatch.start).
// It also records what every repository of the wave's remotes show
// without network, compared after every step (remoteWatch.afterStep).
func (g *Guard) WatchRemotes(ctx context.Context, repos []*spec.Repo) {
	g.remotes.start(ctx, g.git, repos)
	g.remotes.startLocal(ctx, g.git, g.repos)
}

// LocalRemotes records what the remotes of every repository of the
// wave show without network (Git.LocalRemoteState), as WatchRemotes
// does, and returns it by repository name.
func (g *Guard) LocalRemotes(ctx context.Context) map[string]string {
	g.remotes.startLocal(ctx, g.git, g.repos)
	g.remotes.mu.Lock()
	defer g.remotes.mu.Unlock()
	out := make(map[string]string, len(g.remotes.local))
	for rp, st := range g.remotes.local {
		out[rp.Name] = st
	}
	return out
}

// CompareRemotes compares the remotes of repos with what was recorded,
// where a command or test step ended since the last comparison, and
// returns the change as an incident's text ("" when none) and the lots
// whose command or test steps ran there since the last comparison.
func (g *Guard) CompareRemotes(ctx context.Context, repos []*spec.Repo) (string, []string) {
	return g.remotes.compare(ctx, g.git, repos)
}

// CompareAllRemotes is CompareRemotes for every repository watched.
func (g *Guard) CompareAllRemotes(ctx context.Context) string {
	msg, _ := g.remotes.compare(ctx, g.git, g.remotes.all())
	return msg
}
