package guard

import (
	"context"
	"sync"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/spec"
)

// Hook check (docs/integration.md, Guards; gitint/hookguard.go): a hook
// planted or changed in a repository's hooks folder would run in the next
// lot's commits and in the lead's own. So, before every step, the hooks
// folders of every repository of the wave are read as bytes (no git
// process), and after it, with the config check and before any other git
// call cadence makes, compared: a planted or changed hook is set aside
// under the lot's rescue folder and the hook as it was put back; either
// is an incident. As for the config (config.go), the recorded content is
// the one read when the first of the steps running in the repository
// began, and stays until none runs. cadence never writes a hooks folder.

// hookWatch is the wave's record of its repositories' hooks folders.
type hookWatch struct {
	mu    sync.Mutex
	repos map[*spec.Repo]*hookRecord
}

// hookRecord is one repository's: running counts the steps watching it,
// base is the content recorded (ok: it could be read).
type hookRecord struct {
	running int
	base    gitint.HookFiles
	ok      bool
}

// began records that a step watching rp begins, reading the repository's
// hooks folders when no other step watches it.
func (w *hookWatch) began(ctx context.Context, g Git, rp *spec.Repo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.repos == nil {
		w.repos = map[*spec.Repo]*hookRecord{}
	}
	rec := w.repos[rp]
	if rec == nil {
		rec = &hookRecord{}
		w.repos[rp] = rec
	}
	if rec.running == 0 {
		base, err := g.Hooks(ctx, rp)
		rec.base, rec.ok = base, err == nil
	}
	rec.running++
}

// ended checks, once a step of lot watching rp ended, the repository's
// hooks folders against the recorded content (setting aside and putting
// back what changed) and returns what it found, for the incident.
func (w *hookWatch) ended(g Git, rp *spec.Repo, wave, lot string) []string {
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
	for _, c := range g.RestoreHooks(rec.base, wave, lot) {
		found = append(found, "in repo "+rp.Name+", "+c.String())
	}
	return found
}
