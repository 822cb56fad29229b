package guard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// Watch is what a step's guard read before the step ran (Before), for
// its check after it (After).
type Watch struct {
	g   *Guard
	lot Lot
	// kind names the step in the incident ("implement", "test", "setup").
	kind string
	refs map[*spec.Repo]gitint.Refs
	pos  map[*spec.Repo]int
	// began is when the refs were read (stepStart), for the lead's moves.
	began time.Time
	// checkouts is the status of the lot's repositories' checkouts before
	// a step outside an OS sandbox, nil for other steps (checkout.go).
	checkouts map[*spec.Repo]gitint.CheckoutStatus
	// lotRefs are the wave's lot branches, acts every lot's activity and
	// logTips the lot's worktrees' HEAD reflog tips (lotrefs.go).
	lotRefs map[*spec.Repo]gitint.Refs
	acts    map[string]lotGen
	logTips map[*spec.Repo]string
	// order is every repository of the wave watched, the lot's first
	// (watched); stash their stash entries before the step.
	order []Repo
	stash map[*spec.Repo][]gitint.StashEntry
	done  func()
	// shell is set for a command or test step: its repositories' remotes
	// are compared later (remoteWatch), not around the step.
	shell bool
	// cfgRepos are the repositories whose config is checked after the
	// step (config.go); cfg is what that check found, once cfgDone.
	cfgRepos []*spec.Repo
	cfg      []string
	cfgDone  bool
	// found are the incidents and notes Before found (the lot's branch
	// moved between its steps; refs it could not read).
	found Findings
}

// Options say how a step is watched. Kind names the step in the
// incident; Shell marks a command, test gate or setup (its repositories'
// remotes are compared at integration and the wave's end, not around the
// step); Checkout says the step runs outside an OS sandbox, so the lead's
// checkouts are compared around it (checkout.go).
type Options struct {
	Kind     string
	Shell    bool
	Checkout bool
}

// Before reads, before a step of lot, the config files of each of its
// repositories, the hooks folders (hooks.go), the refs (guarded refs, cadence's own refs, the wave's lot
// branches: one git call each, at most) and the stash of every repository
// of the wave, its worktrees' HEAD reflog tips and, for a step outside an
// OS sandbox, the lead's checkouts. It checks first that the lot's
// branch is where its last step left it (checkTip: a move between steps
// is put back, an incident in the returned Findings). A lot without a
// repository has nothing to watch (nil). It reads whatever ctx says.
func (g *Guard) Before(ctx context.Context, lot Lot, o Options) (*Watch, Findings) {
	if len(lot.Repos) == 0 {
		return nil, Findings{}
	}
	ctx = context.WithoutCancel(ctx)
	w := &Watch{g: g, lot: lot, refs: map[*spec.Repo]gitint.Refs{}, pos: map[*spec.Repo]int{}, began: stepStart(), kind: o.Kind, shell: o.Shell,
		lotRefs: map[*spec.Repo]gitint.Refs{}, logTips: map[*spec.Repo]string{}, stash: map[*spec.Repo][]gitint.StashEntry{}, done: g.lots.busy(lot.ID)}
	w.acts = g.lots.snapshot()
	for _, r := range lot.Repos {
		g.configs.began(ctx, g.git, r.Repo)
		w.cfgRepos = append(w.cfgRepos, r.Repo)
	}
	for _, r := range g.watched(lot) {
		g.hooks.began(ctx, g.git, r.Repo)
		w.order = append(w.order, r)
	}
	for _, r := range w.order {
		rp := r.Repo
		rl := g.refs.of(rp)
		rl.mu.Lock()
		refs, lots, err := g.readRefs(ctx, lot, rp)
		w.pos[rp] = len(rl.moves)
		rl.mu.Unlock()
		if err != nil {
			w.found.Notes = append(w.found.Notes, "cannot read the refs of repo "+rp.Name+" before the step (they are not checked after it): "+err.Error())
			continue
		}
		if st, err := g.git.Stash(ctx, rp); err == nil {
			w.stash[rp] = st
		} else {
			w.found.Notes = append(w.found.Notes, "cannot read the stash of repo "+rp.Name+" before the step (it is not checked after it): "+err.Error())
		}
		w.refs[rp] = refs
		if r.Dir == "" {
			w.lotRefs[rp] = lots
			continue
		}
		tip, incident := g.checkTip(ctx, lot, rp, lots)
		if incident != "" {
			w.found.Incidents = append(w.found.Incidents, incident)
		}
		lots["refs/heads/"+lot.Branch] = tip
		w.lotRefs[rp], w.logTips[rp] = lots, g.git.HeadLogTip(r.Dir)
	}
	if o.Checkout {
		w.checkouts = g.readCheckouts(ctx, lot, "before", &w.found.Notes)
	}
	if o.Shell {
		g.remotes.started(lot)
	}
	return w, w.found
}

// watched are the repositories a step of lot is watched in: the lot's
// own, with its worktrees, then the wave's others, with no worktree (Dir
// "").
func (g *Guard) watched(lot Lot) []Repo {
	out := append([]Repo(nil), lot.Repos...)
	for _, rp := range g.repos {
		if !slices.ContainsFunc(lot.Repos, func(r Repo) bool { return r.Repo == rp }) {
			out = append(out, Repo{Repo: rp})
		}
	}
	return out
}

// CheckConfig runs the config and hooks checks of the step watched by w,
// once, and returns what they found: a session calls it as soon as the agent returns,
// before any other git call, and After again (config.go).
func (w *Watch) CheckConfig(ctx context.Context) []string {
	if w == nil {
		return nil
	}
	if w.cfgDone {
		return w.cfg
	}
	w.cfgDone = true
	ctx = context.WithoutCancel(ctx)
	for _, rp := range w.cfgRepos {
		w.cfg = append(w.cfg, w.g.configs.ended(ctx, w.g.git, rp, w.g.wave, w.lot.ID)...)
	}
	for _, r := range w.order {
		w.cfg = append(w.cfg, w.g.hooks.ended(w.g.git, r.Repo, w.g.wave, w.lot.ID)...)
	}
	return w.cfg
}

// After checks, once the step ended, what Before read: the config first
// (CheckConfig), then each of the lot's worktrees is put back on the
// lot's branch if it left it, then each foreign move of a guarded ref or
// lot branch is put back (gitint.RestoreRefs), and the lead's checkouts
// compared. The Findings' Incident is the step's incident, "" when
// nothing moved. It runs whatever the context (a step stopped by a
// signal is checked too); a nil Watch finds nothing.
func (w *Watch) After(ctx context.Context) Findings {
	if w == nil {
		return Findings{}
	}
	g, lot := w.g, w.lot
	ctx = context.WithoutCancel(ctx)
	defer w.done()
	if w.shell {
		defer g.remotes.ended(lot)
	}
	var out Findings
	// The config first: what a step planted there (core.fsmonitor, an
	// alias, a remote's URL) must be gone before cadence runs git again.
	found := append([]string(nil), w.CheckConfig(ctx)...)
	headMoved := map[*spec.Repo]bool{}
	// The worktrees next: a worktree left on a guarded branch must be
	// back on the lot's branch before that branch is put back.
	for _, r := range lot.Repos {
		head, err := g.git.WorktreeHead(r.Dir)
		if err != nil || head == "refs/heads/"+lot.Branch {
			continue
		}
		headMoved[r.Repo] = true
		what := fmt.Sprintf("the worktree %s was on %s instead of the lot's branch %s", r.Dir, shortRef(head), lot.Branch)
		if how, err := g.git.PutOnBranch(ctx, r.Repo, r.Dir, lot.Branch, g.wave, lot.ID); err != nil {
			what += "; it could NOT be put back (" + err.Error() + ")"
			if how != "" {
				what += "; " + how
			}
		} else {
			what += "; put back: " + how
		}
		found = append(found, what)
	}
	for _, r := range w.order {
		f, notes := g.checkRepo(ctx, w, r, headMoved[r.Repo])
		found = append(found, f...)
		out.Notes = append(out.Notes, notes...)
	}
	if pushed := g.remotes.afterStep(ctx, g.git, w.shell); len(pushed) > 0 {
		others := othersDuring(lot.ID, w.acts, g.lots.snapshot())
		if len(others) > 0 {
			pushed = append(pushed, "lots with steps running meanwhile, held too: "+strings.Join(others, ", "))
			g.remotes.suspect(others, "while its step ran, "+strings.Join(pushed, "; ")+" (found after a step of lot "+lot.ID+")")
		}
		found = append(found, pushed...)
	}
	found = append(found, g.remotes.suspected(lot.ID)...)
	out.Held, out.Warning = g.checkCheckouts(ctx, w, &out.Notes)
	if len(found) > 0 {
		out.Incident = fmt.Sprintf("during its %s step, not by cadence: %s", w.kind, strings.Join(found, "; "))
	}
	return out
}

// checkRepo is After's check of one repository r of the wave (Dir "":
// not one of the lot's): the foreign moves of its guarded refs and of
// cadence's own refs are put back (gitint.RestoreRefs), then its lot
// branches checked (checkLotRefs) and its stash (checkStash), and the
// refusals of its witness taken. It returns what it found, for the
// incident, and notes for the journal.
func (g *Guard) checkRepo(ctx context.Context, w *Watch, r Repo, headMoved bool) (found, notes []string) {
	rp, lot := r.Repo, w.lot
	before, ok := w.refs[rp]
	if !ok {
		return nil, nil
	}
	rl := g.refs.of(rp)
	rl.mu.Lock()
	after, lots, err := g.readRefs(ctx, lot, rp)
	var puts []gitint.PutBack
	var onTop map[string][]string
	if err == nil {
		var moves, kept []gitint.RefMove
		if moves, onTop = rl.foreign(before, after, w.pos[rp]); len(moves) > 0 {
			moves = withoutCreatedOwn(moves)
			moves, kept = leadSplit(moves, g.git.OutsideMoves(ctx, rp, w.began))
			notes = rl.leadNotes(rp, kept)
		}
		if len(moves) > 0 {
			puts = g.git.RestoreRefs(ctx, rp, g.wave, lot.ID, moves)
		}
	}
	rl.mu.Unlock()
	if err != nil {
		return nil, append(notes, "cannot read the refs of repo "+rp.Name+" after the step (they are not checked): "+err.Error())
	}
	for _, p := range puts {
		what := "in repo " + rp.Name + ", " + p.String()
		if lots := onTop[p.Ref]; len(lots) > 0 {
			what += fmt.Sprintf(" (lot %s was integrated on top of the foreign value: that integration is under the rescue ref too, and its branch keeps its commits)", strings.Join(lots, ", "))
		}
		found = append(found, what)
	}
	found = append(found, g.checkLotRefs(ctx, w, r, lots, headMoved)...)
	found = append(found, g.checkStash(ctx, w, rp)...)
	for _, rf := range g.git.Refusals(ctx, rp) {
		found = append(found, "in repo "+rp.Name+", "+rf.String())
	}
	return found, notes
}

// withoutCreatedOwn leaves out of moves the refs created under cadence's
// own namespace (gitint.CadenceRefs): cadence makes backup and rescue
// refs while steps run; a step's move or deletion of one is foreign.
func withoutCreatedOwn(moves []gitint.RefMove) []gitint.RefMove {
	return slices.DeleteFunc(moves, func(m gitint.RefMove) bool {
		return m.Old == "" && strings.HasPrefix(m.Ref, gitint.CadenceRefs)
	})
}

// checkStash compares the repository's stash after the step with before:
// an entry that was there before and is gone (the step did not make it)
// is put back (gitint.RestoreStash), and described for the incident.
func (g *Guard) checkStash(ctx context.Context, w *Watch, rp *spec.Repo) []string {
	before, ok := w.stash[rp]
	if !ok || len(before) == 0 {
		return nil
	}
	after, err := g.git.Stash(ctx, rp)
	if err != nil {
		return nil
	}
	missing := gitint.MissingStash(before, after)
	if len(missing) == 0 {
		return nil
	}
	var found []string
	for _, p := range g.git.RestoreStash(ctx, rp, missing) {
		found = append(found, "in repo "+rp.Name+", "+p.String())
	}
	return found
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

// short is a commit's first 12 hex digits.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
