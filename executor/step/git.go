package step

import (
	"context"
	"os"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// Agent runs one agent session to its end: an agent.Router, which hands
// the session to the adapter of its agent's kind (executor/agent), or a
// fake in tests.
type Agent interface {
	Run(ctx context.Context, s agent.Session) agent.Outcome
}

// Git is what a Local runner and the orchestrator need of git
// (gitint.Repos, or a fake in tests); the guard's part is guard.Git.
type Git interface {
	guard.Git

	// Worktree makes, or finds again, the lot's worktree at dir on branch
	// cadence/<wave>/<lot> started from the repo's base, and returns the
	// base commit it started from (for a branch that existed, its merge
	// base with the base; the lot keeps the one it recorded). fresh says
	// the lot has run no step yet, so a half-made worktree at dir (cadence
	// was killed while making it) holds nothing of value and may be redone.
	Worktree(ctx context.Context, repo *spec.Repo, dir, branch string, fresh bool) (baseSHA string, err error)
	// Head is the worktree's HEAD commit.
	Head(ctx context.Context, dir string) (string, error)
	// Base is the commit of the repository's base branch.
	Base(ctx context.Context, repo *spec.Repo) (string, error)
	// Dirty lists the worktree's uncommitted changes (untracked included).
	Dirty(ctx context.Context, dir string) ([]string, error)
	// Commits lists the commits in from..to, oldest first, as "sha subject".
	Commits(ctx context.Context, dir, from, to string) ([]string, error)
	// Changed lists the files from..to adds or changes, as paths from the
	// repository's root (gitint.Repos.Changed).
	Changed(ctx context.Context, dir, from, to string) ([]string, error)
	// LockIntegration serialises integrations into one repository.
	LockIntegration(ctx context.Context, repo *spec.Repo, wave string) (func(), error)
	// Rebase brings the branch checked out in dir onto the repo's base
	// (changelog-only conflicts resolved by union) and says whether it
	// rewrote it; a real conflict aborts it and is a *gitint.ConflictError.
	Rebase(ctx context.Context, repo *spec.Repo, dir string) (bool, error)
	// RebaseOnto is Rebase onto the commit onto (a merge-queue batch
	// stacks a lot on the lots ahead of it), upstream "" or where the
	// branch's own commits begin (gitint.Repos.RebaseOnto).
	RebaseOnto(ctx context.Context, repo *spec.Repo, dir, onto, upstream string) (bool, error)
	// Unstack puts a lot's branch back at tip, where it was before a
	// batch stacked it, with keep first keeping where it is under the
	// lot's next backup ref, returned (gitint.Repos.Unstack).
	Unstack(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot, tip string, keep bool) (string, error)
	// Tree is the tree id of the worktree's HEAD commit.
	Tree(ctx context.Context, dir string) (string, error)
	// TreeOf is the tree id of a commit of the repository
	// (gitint.Repos.TreeOf).
	TreeOf(ctx context.Context, repo *spec.Repo, commit string) (string, error)
	// IsAncestor says whether commit a is b or an ancestor of it (false
	// when git cannot say).
	IsAncestor(ctx context.Context, repo *spec.Repo, a, b string) bool
	// Advance moves the base to the branch by fast-forward only, when the
	// branch is at want ("" for no check), and returns the new base commit.
	Advance(ctx context.Context, repo *spec.Repo, branch, want string) (string, error)
	// Rewind undoes an Advance (base from sha back to old) when a
	// neighbour repository of the lot could not be integrated.
	Rewind(ctx context.Context, repo *spec.Repo, sha, old string) error
	// PatchID identifies the change from..to, rebased or not.
	PatchID(ctx context.Context, repo *spec.Repo, from, to string) (string, error)
	// ResetForReplay puts the lot's worktree at dir back to commit to before
	// a replayed command, keeping what was there under the lot's next
	// backup ref (returned, "" when nothing needed keeping).
	ResetForReplay(ctx context.Context, repo *spec.Repo, dir, wave, lot, to string) (backup string, err error)
	// SetAside keeps a replaced lot's branch (and its worktree's changes)
	// under the lot's next backup ref (returned, "" when there was no
	// branch), then removes the worktree and deletes the branch, so the
	// lot starts afresh from the current base.
	SetAside(ctx context.Context, repo *spec.Repo, dir, branch, wave, lot string) (backup string, err error)
	// RemoveWorktree removes a lot's worktree (the branch is kept).
	RemoveWorktree(ctx context.Context, repo *spec.Repo, dir string) error
	// SessionEnv returns the guard environment of a step (command, test
	// gate, session) working with the repositories: entries added to base
	// that make pushes fail and foreign ref updates refused.
	SessionEnv(ctx context.Context, repos []*spec.Repo, base []string) []string
	// RemoteHosts returns the network hosts of the repositories' remotes
	// (gitint.RemoteHosts): what a sandboxed session may not reach.
	RemoteHosts(ctx context.Context, repos []*spec.Repo) []string

	// GuardWorktree puts the lot worktree at dir, on branch, under its
	// repository's guard (installed by the Host for the wave), whatever
	// the environment of the git processes working there.
	GuardWorktree(ctx context.Context, repo *spec.Repo, dir, branch string) error
	// SetUpWorktree brings into the new lot worktree at dir of repo what
	// git does not: its submodules (unless b.Submodules is off) and b's
	// copy files (gitint.Repos.SetUpWorktree). The setup command is the
	// step runner's.
	SetUpWorktree(ctx context.Context, repo *spec.Repo, dir string, b spec.Bootstrap) error
}

// Slots hands out cross-process session slots. Acquire returns, with the
// release, the locked slot file when there is one (nil otherwise): the
// session's supervisor holds it until the session's last process is gone.
type Slots interface {
	Acquire(ctx context.Context, lot string, step state.StepKind) (release func(), lock *os.File, err error)
}
