package guard

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// Remote comparison for command lots and test gates (docs/decisions.md,
// Remote comparison). An agent session compares its repositories' remotes
// around itself (session.go); a network round trip around every command
// step would dominate a Make-style wave, so for commands and test gates
// the remotes (Git.RemoteState) are read once at the wave's start, then
// compared before each integration and at the wave's end, each time only
// when such a step ended in the repository since the last comparison. A
// change is an incident naming the lots whose command or test steps ran
// in the repository since that comparison (ended, or running then).

// What is seen without network (gitint.LocalRemoteState: the
// remote-tracking refs, and the refs and receive side of the remotes
// that are folders on this machine) is compared after every step, of
// every repository of the wave: a change after a command, test gate or
// setup is the step's incident, naming what changed (a transient push to
// a local remote included); after an agent session, which compares its
// repositories' remotes around itself, the record follows silently.

// remoteWatch is the wave's record of the remotes of the repositories that
// command or test steps use, and of what every repository's remotes show
// without network (local).
type remoteWatch struct {
	mu    sync.Mutex
	repos map[*spec.Repo]*remoteRecord
	local map[*spec.Repo]string
	// suspects are the lots whose steps ran while a step of another lot
	// found a push: each one's next step check is an incident too (said).
	suspects map[string][]string
}

// suspect records that lots may have made the push said in what.
func (w *remoteWatch) suspect(lots []string, what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.suspects == nil {
		w.suspects = map[string][]string{}
	}
	for _, id := range lots {
		w.suspects[id] = append(w.suspects[id], what)
	}
}

// suspected takes what lot is suspected of (suspect), for its step's
// incident.
func (w *remoteWatch) suspected(lot string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	what := w.suspects[lot]
	delete(w.suspects, lot)
	return what
}

// maxChanges bounds the changes an incident names per repository.
const maxChanges = 10

// remoteRecord is one repository's.
type remoteRecord struct {
	// cmp serialises comparisons (state).
	cmp sync.Mutex
	// state is what Git.RemoteState said at the wave's start or at the
	// last comparison that found a change.
	state string
	// ran are the lots whose command or test steps ended since the last
	// comparison, in order (repeats allowed); running counts the ones
	// running now, by lot.
	ran     []string
	running map[string]int
}

// start reads the remotes of repos, every repository that a command or
// test step of the run's lots may use (every repository of a command lot,
// and of an agent lot with a test gate in any of its repositories: a gate
// may run in any of them at integration). One Git.RemoteState per
// repository. A read cut short by ctx (the run is being stopped) is not
// recorded: that repository is not compared (a cancelled read would pass
// for a change).
func (w *remoteWatch) start(ctx context.Context, g Git, repos []*spec.Repo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.repos == nil {
		w.repos = map[*spec.Repo]*remoteRecord{}
	}
	for _, rp := range repos {
		if _, seen := w.repos[rp]; seen {
			continue
		}
		st := g.RemoteState(ctx, rp)
		if ctx.Err() != nil {
			w.repos[rp] = nil
			continue
		}
		w.repos[rp] = &remoteRecord{state: st, running: map[string]int{}}
	}
}

// started counts a command or test step of the lot as running.
func (w *remoteWatch) started(lot Lot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range lot.Repos {
		if rec := w.repos[r.Repo]; rec != nil {
			rec.running[lot.ID]++
		}
	}
}

// ended records that a command or test step of the lot ended: its
// repositories' remotes are compared at the next integration or the
// wave's end.
func (w *remoteWatch) ended(lot Lot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range lot.Repos {
		if rec := w.repos[r.Repo]; rec != nil {
			if rec.running[lot.ID]--; rec.running[lot.ID] <= 0 {
				delete(rec.running, lot.ID)
			}
			rec.ran = append(rec.ran, lot.ID)
		}
	}
}

// compare compares the remotes of repos with what was recorded, for the
// repositories where a command or test step ended since the last
// comparison (no git call for the others). It returns the first change as
// an incident's text naming the repository, the lots and what changed
// ("" when none), and the lots named,
// and records the new state so that one push is reported once. A
// comparison that finds no change forgets only the steps that had ended
// when it began; a step that ends meanwhile is compared next time. With
// ctx ended it compares nothing (the wave's end compares what is left).
func (w *remoteWatch) compare(ctx context.Context, g Git, repos []*spec.Repo) (msg string, blamed []string) {
	var msgs []string
	for _, rp := range repos {
		if ctx.Err() != nil {
			break
		}
		w.mu.Lock()
		rec := w.repos[rp]
		w.mu.Unlock()
		if rec == nil {
			continue
		}
		rec.cmp.Lock()
		w.mu.Lock()
		n := len(rec.ran)
		w.mu.Unlock()
		if n == 0 {
			rec.cmp.Unlock()
			continue
		}
		now := g.RemoteState(ctx, rp)
		if ctx.Err() != nil {
			rec.cmp.Unlock()
			break
		}
		w.mu.Lock()
		if now == rec.state {
			rec.ran = rec.ran[n:]
			w.mu.Unlock()
			rec.cmp.Unlock()
			continue
		}
		lots := append([]string(nil), rec.ran...)
		for id := range rec.running {
			lots = append(lots, id)
		}
		before := rec.state
		rec.state, rec.ran = now, nil
		w.mu.Unlock()
		rec.cmp.Unlock()
		lots = slices.Compact(slices.Sorted(slices.Values(lots)))
		msgs = append(msgs, fmt.Sprintf("the remotes of repo %s changed since they were last compared, a push while lot(s) %s ran commands or test gates there (%s)",
			rp.Name, strings.Join(lots, ", "), strings.Join(gitint.RemoteChanges(before, now, maxChanges), "; ")))
		blamed = append(blamed, lots...)
	}
	return strings.Join(msgs, "; "), slices.Compact(slices.Sorted(slices.Values(blamed)))
}

// all is every repository watched, by name (the wave's end compares them).
func (w *remoteWatch) all() []*spec.Repo {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*spec.Repo
	for rp := range w.repos {
		out = append(out, rp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// startLocal records what the remotes of repos, every repository of the
// wave, show without network (Git.LocalRemoteState), once per
// repository.
func (w *remoteWatch) startLocal(ctx context.Context, g Git, repos []*spec.Repo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.local == nil {
		w.local = map[*spec.Repo]string{}
	}
	for _, rp := range repos {
		if _, seen := w.local[rp]; !seen {
			w.local[rp] = g.LocalRemoteState(ctx, rp)
		}
	}
}

// afterStep compares, once a step ended, what the remotes of every
// repository recorded show without network with the record, and records
// the new state. report says the step is a command, test gate or setup:
// a change is then returned, one line per repository, naming what
// changed; the full record of that repository (compare's) is read again,
// so that one push is reported once. Without report (an agent session,
// which compares its remotes itself) the change is only recorded.
func (w *remoteWatch) afterStep(ctx context.Context, g Git, report bool) []string {
	w.mu.Lock()
	repos := make([]*spec.Repo, 0, len(w.local))
	for rp := range w.local {
		repos = append(repos, rp)
	}
	w.mu.Unlock()
	sort.Slice(repos, func(i, j int) bool { return repos[i].Name < repos[j].Name })
	var found []string
	for _, rp := range repos {
		now := g.LocalRemoteState(ctx, rp)
		w.mu.Lock()
		before := w.local[rp]
		w.local[rp] = now
		rec := w.repos[rp]
		w.mu.Unlock()
		if now == before {
			continue
		}
		if rec != nil {
			rec.cmp.Lock()
			st := g.RemoteState(ctx, rp)
			w.mu.Lock()
			rec.state = st
			w.mu.Unlock()
			rec.cmp.Unlock()
		}
		if report {
			found = append(found, fmt.Sprintf("in repo %s, the remotes changed (a push): %s", rp.Name, strings.Join(gitint.RemoteChanges(before, now, maxChanges), "; ")))
		}
	}
	return found
}

// RemoteChanges says what differs between two remote states
// (gitint.RemoteChanges), at most maxChanges lines.
func RemoteChanges(before, after string) []string {
	return gitint.RemoteChanges(before, after, maxChanges)
}
