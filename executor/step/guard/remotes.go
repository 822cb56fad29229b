package guard

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

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

// remoteWatch is the wave's record of the remotes of the repositories that
// command or test steps use.
type remoteWatch struct {
	mu    sync.Mutex
	repos map[*spec.Repo]*remoteRecord
}

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
// an incident's text naming the repository and the lots ("" when none),
// and records the new state so that one push is reported once. A
// comparison that finds no change forgets only the steps that had ended
// when it began; a step that ends meanwhile is compared next time. With
// ctx ended it compares nothing (the wave's end compares what is left).
func (w *remoteWatch) compare(ctx context.Context, g Git, repos []*spec.Repo) string {
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
		rec.state, rec.ran = now, nil
		w.mu.Unlock()
		rec.cmp.Unlock()
		msgs = append(msgs, fmt.Sprintf("the remotes of repo %s changed since they were last compared, a push while lot(s) %s ran commands or test gates there",
			rp.Name, strings.Join(slices.Compact(slices.Sorted(slices.Values(lots))), ", ")))
	}
	return strings.Join(msgs, "; ")
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
