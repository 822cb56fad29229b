package executor

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Tidier is an Agent that can remove what sessions killed with their
// cadence left in worktrees and repositories (step.Tidier).
type Tidier = step.Tidier

// tidyRepos removes what killed sessions left in the git dirs and main
// worktrees of repos (an empty config.lock of the sandbox would make the
// guard's `git config` fail), before the guard is installed; since is when
// this apply took its locks. It returns a line for the user per
// repository where something was removed.
func tidyRepos(a Agent, repos []*spec.Repo, since time.Time, env []string) []string {
	td, ok := a.(Tidier)
	if !ok {
		return nil
	}
	var out []string
	for _, r := range repos {
		if removed := td.Tidy(agent.Tidy{Repos: []string{r.Path}, Before: since, Env: env}); len(removed) > 0 {
			out = append(out, fmt.Sprintf("removed what a killed agent session left in repo %s: %s", r.Name, relList(r.Path, removed)))
		}
	}
	return out
}

// tidyLot removes, through the step runner (step.Runner.Tidy), what
// killed sessions left in the worktrees of lot n, a lot the state knows, before its recovery decides anything about it
// (a placeholder left there would read as the agent's uncommitted work).
func (r *runner) tidyLot(n *node) {
	if n.lot.Repo == nil {
		return
	}
	var ran bool
	r.o.Store.View(func(st *state.State) { ran = st.Lots[n.lot.ID] != nil && len(st.Lots[n.lot.ID].Steps) > 0 })
	own, dirs, recorded := r.worktreesOf(n.lot)
	if !ran || !recorded {
		return
	}
	var ws []string
	for _, d := range dirs {
		ws = append(ws, d)
	}
	if removed, _ := r.steps.Tidy(context.Background(), ws, r.began); len(removed) > 0 {
		r.emit(Event{Kind: EvOutput, Lot: n.lot.ID, Message: "removed what a killed agent session left in its worktree: " + relList(own, removed)})
	}
}

// relList names paths relative to dir where they are inside it, at most
// five, and how many more.
func relList(dir string, paths []string) string {
	var names []string
	for _, p := range paths {
		if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		names = append(names, p)
	}
	if len(names) > 5 {
		names = append(names[:5], fmt.Sprintf("and %d more", len(names)-5))
	}
	return strings.Join(names, ", ")
}
