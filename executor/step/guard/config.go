package guard

import (
	"context"
	"sync"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// Config check (docs/integration.md, Guards; gitint/cfgguard.go): a step
// may write its repositories' config (core.fsmonitor, alias.*,
// core.sshCommand, a remote's URL), which cadence's own git calls after
// the step would obey. So, before every step, the config files of each
// repository the lot touches are read as bytes, and after it, FIRST,
// before any other git call cadence makes, they are compared: a changed
// file is kept under <common>/cadence/rescue/<wave>/<lot>/config-<n> and
// put back, and cadence's guard folder is checked (reinstalled when
// damaged). Either is an incident.
//
// Lots of one repository run at once: the recorded content is the one
// read when the first of the steps running in the repository began, and
// stays until none runs; so a neighbour's step that starts after a
// change does not take the change for the recorded content. cadence
// writes a repository's config only when it installs or removes its
// guard, before the first step and after the last.

// configWatch is the wave's record of its repositories' config files.
type configWatch struct {
	mu    sync.Mutex
	repos map[*spec.Repo]*configRecord
}

// configRecord is one repository's.
type configRecord struct {
	// running counts the steps running in the repository.
	running int
	// base is the content recorded (ok: it could be read).
	base gitint.ConfigFiles
	ok   bool
	// seen: the guard was checked once; guarded: it was intact then (the
	// guard is repaired only where the wave installed it).
	seen, guarded bool
}

// began records that a step working in rp begins, reading the repository's
// config files when no other step runs there.
func (w *configWatch) began(ctx context.Context, g Git, rp *spec.Repo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.repos == nil {
		w.repos = map[*spec.Repo]*configRecord{}
	}
	rec := w.repos[rp]
	if rec == nil {
		rec = &configRecord{}
		w.repos[rp] = rec
	}
	if rec.running == 0 {
		base, err := g.ConfigFiles(ctx, rp)
		rec.base, rec.ok = base, err == nil
		if !rec.seen && rec.ok {
			rec.seen, rec.guarded = true, g.GuardIntact(base) == ""
		}
	}
	rec.running++
}

// ended checks, once a step of the lot working in rp ended, the
// repository's config files against the recorded content (putting back
// what changed) and the guard folder (repairing it), and returns what it
// found, for the incident.
func (w *configWatch) ended(ctx context.Context, g Git, rp *spec.Repo, wave, lot string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	rec := w.repos[rp]
	if rec == nil {
		return nil
	}
	rec.running--
	if !rec.ok {
		return nil
	}
	var found []string
	for _, c := range g.RestoreConfig(rec.base, wave, lot) {
		found = append(found, "in repo "+rp.Name+", "+c.String())
	}
	if rec.guarded {
		if what := g.GuardIntact(rec.base); what != "" {
			msg := "in repo " + rp.Name + ", " + what
			if _, err := g.RepairGuard(ctx, rp); err != nil {
				msg += "; it could NOT be reinstalled: " + err.Error()
			} else {
				msg += "; reinstalled"
			}
			found = append(found, msg)
		}
	}
	return found
}
