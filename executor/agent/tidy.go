package agent

import (
	"time"
)

// Tidier is an Adapter whose sessions, when their cadence is killed (kill
// -9: no session end runs its cleanup), may leave files of the CLI's own
// in the folders they ran in: Claude Code's sandbox leaves empty
// placeholder files in a worktree and an empty config.lock in the
// repository's git dir. The executor calls it when it recovers a wave,
// before it looks at any lot; `cadence clean` calls it too.
type Tidier interface {
	// Tidy removes (or, with t.DryRun, only lists) what killed sessions of
	// the kind left, and nothing else: never a file with content, never a
	// file git tracks, never one a live process holds (open, or mounted
	// over by a running sandbox), never one made at or after t.Before. It
	// returns the absolute paths removed (or that would be). Errors are
	// not returned: what cannot be removed, or cannot be told apart from
	// the user's own files, stays.
	Tidy(t Tidy) []string
}

// Tidy says where Tidier.Tidy looks.
type Tidy struct {
	// Worktrees are cadence's own worktrees of interrupted lots (their
	// folders and git dirs): every leftover there goes.
	Worktrees []string
	// Repos are the lead's repositories (a path in each): only what the
	// sessions leave in their git dirs and in the main worktree goes.
	Repos []string
	// Before is the time the tidying run began: what was made at or after
	// it belongs to something running now.
	Before time.Time
	// Env is the environment to find git with (its PATH).
	Env []string
	// DryRun lists without removing.
	DryRun bool
}

// TidyAll runs Tidy of every adapter of the registry that is a Tidier and
// returns all they removed.
func (r *Registry) TidyAll(t Tidy) []string {
	var out []string
	for _, a := range r.Adapters() {
		if td, ok := a.(Tidier); ok {
			out = append(out, td.Tidy(t)...)
		}
	}
	return out
}

// Tidy runs TidyAll with the Host's environment: the executor's recovery
// (executor.Tidier).
func (r *Router) Tidy(t Tidy) []string {
	if t.Env == nil {
		t.Env = r.Host.Env
	}
	return r.Adapters.TidyAll(t)
}
