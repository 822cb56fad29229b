package executor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Guarded refs (DECISIONS10, DESIGN.md §5 "detection"): before and after
// every step of a lot (agent session, command, test gate), cadence reads
// the guarded refs (refs/heads, refs/tags) of every repository the lot
// touches, one git call per repository, and the HEAD of each of the lot's
// worktrees (from its files). After the step, a worktree that is no longer
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
	moves []ownMove
	// told are the lead's moves the journal has said ("<ref> <new>").
	told map[string]bool
}

// ownMove is a move cadence made itself, for the integration of lot.
type ownMove struct {
	gitint.RefMove
	lot string
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
		rl.moves = append(rl.moves, ownMove{m, lot})
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
				onTop[ref] = append(onTop[ref], o.lot)
			}
		}
		if after[ref] != want {
			moves = append(moves, gitint.RefMove{Ref: ref, Old: want, New: after[ref]})
		}
	}
	sort.Slice(moves, func(i, j int) bool { return moves[i].Ref < moves[j].Ref })
	return moves, onTop
}

// stepWatch is what a step's guard read before the step ran.
type stepWatch struct {
	refs map[*spec.Repo]gitint.Refs
	pos  map[*spec.Repo]int
	// began is when the refs were read (stepStart), for the lead's moves.
	began time.Time
	// checkouts is the status of the lot's repositories' checkouts before
	// a step outside an OS sandbox, nil for other steps (checkoutguard.go).
	checkouts map[*spec.Repo]gitint.CheckoutStatus
	// lotRefs are the wave's lot branches, acts every lot's activity and
	// logTips the lot's worktrees' HEAD reflog tips (lotrefs.go).
	lotRefs map[*spec.Repo]gitint.Refs
	acts    map[string]lotGen
	logTips map[*spec.Repo]string
	done    func()
	// kind is the step's, for the incident.
	kind state.StepKind
	// shell is set for a command or test step: its repositories' remotes
	// are compared later (remoteWatch), not around the step.
	shell bool
	// cfgRepos are the repositories whose config is checked after the
	// step (cfgguard.go); cfg is what that check found, once cfgDone.
	cfgRepos []*spec.Repo
	cfg      []string
	cfgDone  bool
}

// watchStep reads, before a step of the lot, the guarded refs of each of
// its repositories (one git call each). A command or a test gate (shell
// steps) is also counted for the comparison of its repositories' remotes
// (remoteWatch); a session compares them around itself. A lot without a
// repository has nothing to watch (nil).
func (lr *lotRun) watchStep(ctx context.Context, kind state.StepKind) *stepWatch {
	if lr.n.lot.Repo == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	shell := kind == state.StepRun || kind == state.StepTest
	w := &stepWatch{refs: map[*spec.Repo]gitint.Refs{}, pos: map[*spec.Repo]int{}, began: stepStart(), kind: kind, shell: shell,
		lotRefs: map[*spec.Repo]gitint.Refs{}, logTips: map[*spec.Repo]string{}, done: lr.r.lots.busy(lr.id)}
	w.acts = lr.r.lots.snapshot()
	for _, rp := range lr.n.lot.Repos() {
		lr.r.configs.began(ctx, lr.r.o.Git, rp)
		w.cfgRepos = append(w.cfgRepos, rp)
	}
	for _, rp := range lr.n.lot.Repos() {
		rl := lr.r.refs.of(rp)
		rl.mu.Lock()
		refs, lots, err := lr.readRefs(ctx, rp)
		w.pos[rp] = len(rl.moves)
		rl.mu.Unlock()
		if err != nil {
			lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "cannot read the refs of repo " + rp.Name + " before the step (they are not checked after it): " + err.Error()})
			continue
		}
		w.refs[rp] = refs
		lots["refs/heads/"+lr.branch] = lr.checkTip(ctx, rp, lots)
		w.lotRefs[rp], w.logTips[rp] = lots, lr.r.o.Git.HeadLogTip(lr.dirs[rp])
	}
	if lr.guardsCheckout(kind) {
		w.checkouts = lr.readCheckouts(ctx, "before")
	}
	if shell {
		lr.r.remotes.started(lr)
	}
	return w
}

// checkRefs checks, after a step, what watchStep read before it: each of
// the lot's worktrees is put back on the lot's branch if it left it, then
// each foreign move of a guarded ref is put back (gitint.RestoreRefs). It
// returns the incident's cause ("" when nothing moved), after reporting
// it as the wave's incident (r.incident: the wave stops). It runs whatever
// the context (a step stopped by a signal is checked too).
func (lr *lotRun) checkRefs(ctx context.Context, w *stepWatch) string {
	if w == nil {
		return ""
	}
	ctx = context.WithoutCancel(ctx)
	defer w.done()
	if w.shell {
		defer lr.r.remotes.ended(lr)
	}
	wave := lr.r.o.Config.Wave.Name
	// The config first: what a step planted there (core.fsmonitor, an
	// alias, a remote's URL) must be gone before cadence runs git again.
	found := append([]string(nil), lr.checkConfig(ctx, w)...)
	headMoved := map[*spec.Repo]bool{}
	// The worktrees next: a worktree left on a guarded branch must be
	// back on the lot's branch before that branch is put back.
	for _, rp := range lr.n.lot.Repos() {
		dir := lr.dirs[rp]
		head, err := lr.r.o.Git.WorktreeHead(dir)
		if err != nil || head == "refs/heads/"+lr.branch {
			continue
		}
		headMoved[rp] = true
		what := fmt.Sprintf("the worktree %s was on %s instead of the lot's branch %s", dir, shortRef(head), lr.branch)
		if how, err := lr.r.o.Git.PutOnBranch(ctx, rp, dir, lr.branch, wave, lr.id); err != nil {
			what += "; it could NOT be put back (" + err.Error() + ")"
			if how != "" {
				what += "; " + how
			}
		} else {
			what += "; put back: " + how
		}
		found = append(found, what)
	}
	for _, rp := range lr.n.lot.Repos() {
		before, ok := w.refs[rp]
		if !ok {
			continue
		}
		rl := lr.r.refs.of(rp)
		rl.mu.Lock()
		after, lots, err := lr.readRefs(ctx, rp)
		var puts []gitint.PutBack
		var onTop map[string][]string
		var notes []string
		if err == nil {
			var moves, kept []gitint.RefMove
			if moves, onTop = rl.foreign(before, after, w.pos[rp]); len(moves) > 0 {
				moves, kept = leadSplit(moves, lr.r.o.Git.OutsideMoves(ctx, rp, w.began))
				notes = rl.leadNotes(rp, kept)
			}
			if len(moves) > 0 {
				puts = lr.r.o.Git.RestoreRefs(ctx, rp, wave, lr.id, moves)
			}
		}
		rl.mu.Unlock()
		for _, n := range notes {
			lr.r.emit(Event{Kind: EvOutput, Message: n})
		}
		if err != nil {
			lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "cannot read the refs of repo " + rp.Name + " after the step (they are not checked): " + err.Error()})
			continue
		}
		for _, p := range puts {
			what := "in repo " + rp.Name + ", " + p.String()
			if lots := onTop[p.Ref]; len(lots) > 0 {
				what += fmt.Sprintf(" (lot %s was integrated on top of the foreign value: that integration is under the rescue ref too, and its branch keeps its commits)", strings.Join(lots, ", "))
			}
			found = append(found, what)
		}
		found = append(found, lr.checkLotRefs(ctx, rp, w, lots, headMoved[rp])...)
		for _, rf := range lr.r.o.Git.Refusals(ctx, rp) {
			found = append(found, "in repo "+rp.Name+", "+rf.String())
		}
	}
	lr.checkCheckouts(ctx, w)
	if len(found) == 0 {
		return ""
	}
	body := fmt.Sprintf("during its %s step, not by cadence: %s", w.kind, strings.Join(found, "; "))
	lr.r.incident("lot " + lr.id + ": " + body)
	return IncidentCause + body
}

// shortRef names a HEAD for a message: a branch by its short name, a
// detached HEAD by its commit.
func shortRef(head string) string {
	if b, ok := strings.CutPrefix(head, "refs/heads/"); ok {
		return "branch " + b
	}
	if strings.HasPrefix(head, "refs/") {
		return head
	}
	return "a detached HEAD (" + short(head) + ")"
}

// incidentErr ends a command or test step on an incident: the step is
// recorded failed, and the lot fails (stopOutcome).
type incidentErr struct{ Cause string }

func (e *incidentErr) Error() string { return e.Cause }

// checkStep is checkRefs for the command or test step i: on an incident
// it ends the step failed with the cause and returns an *incidentErr (or
// the error recording the step).
func (lr *lotRun) checkStep(ctx context.Context, w *stepWatch, i int) error {
	cause := lr.checkRefs(ctx, w)
	if cause == "" {
		return nil
	}
	if err := lr.endStep(i, state.StepFailed, cause, nil); err != nil {
		return err
	}
	return &incidentErr{Cause: cause}
}

// incidentOutcome is the outcome of a step that ended on an incident
// (an *incidentErr): failed, with the cause.
func incidentOutcome(err error) (state.Outcome, bool) {
	var ie *incidentErr
	if !errors.As(err, &ie) {
		return state.Outcome{}, false
	}
	return state.Outcome{Kind: state.OutcomeFailed, Status: state.StepFailed, Detail: ie.Cause}, true
}

// withIncident is a session's status and cause once its check found an
// incident: failed, with the incident's cause first.
func withIncident(status state.StepStatus, cause, incident string) (state.StepStatus, string) {
	if incident == "" {
		return status, cause
	}
	if cause != "" {
		incident += " (and the session: " + cause + ")"
	}
	return state.StepFailed, incident
}
