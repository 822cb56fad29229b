package cli

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// tidyKilled has every agent adapter remove (dry: list) what its sessions
// killed with their cadence left in the wave's recorded worktrees and in
// its repositories (agent.Registry.TidyAll), as clean items of kind "placeholder",
// each named by its repository and its path in it.
func tidyKilled(agents *agent.Registry, lay layout.Wave, repos []*spec.Repo, dry bool) []cleanItem {
	var worktrees, paths []string
	if st, _, err := state.Read(lay.StateFile()); err == nil {
		for _, l := range st.Lots {
			if l.Worktree == "" {
				continue
			}
			if _, err := os.Stat(l.Worktree); err == nil {
				worktrees = append(worktrees, l.Worktree)
			}
			for _, r := range repos {
				if also := layout.AlsoWorktree(l.Worktree, r.Name); also != l.Worktree {
					if _, err := os.Stat(also); err == nil {
						worktrees = append(worktrees, also)
					}
				}
			}
		}
	}
	for _, r := range repos {
		paths = append(paths, r.Path)
	}
	removed := agents.TidyAll(agent.Tidy{Worktrees: worktrees, Repos: paths, Before: time.Now(),
		Env: gitint.StepEnviron(os.Environ()), DryRun: dry})
	items := make([]cleanItem, 0, len(removed))
	for _, p := range removed {
		it := cleanItem{Kind: "placeholder", Path: p, Action: cleanRemoved}
		if dry {
			it.Action = cleanRemove
		}
		for _, r := range repos {
			if rel, err := filepath.Rel(r.Path, p); err == nil && !strings.HasPrefix(rel, "..") {
				it.Repo, it.Path = r.Name, rel
			}
		}
		items = append(items, it)
	}
	return items
}
