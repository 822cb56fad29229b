package gitint

import (
	"context"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// RemoteState implements the executor's view of RemoteState.
func (g *Repos) RemoteState(ctx context.Context, repo *spec.Repo) string {
	return g.Git.RemoteState(ctx, repo.Path)
}

// LocalRemoteState implements the executor's view of LocalRemoteState.
func (g *Repos) LocalRemoteState(ctx context.Context, repo *spec.Repo) string {
	return g.Git.LocalRemoteState(ctx, repo.Path)
}

// SessionEnv returns the push-blocking environment entries for sessions
// working in these repositories.
func (g *Repos) SessionEnv(ctx context.Context, repos []*spec.Repo, base []string) []string {
	paths := make([]string, len(repos))
	for i, r := range repos {
		paths[i] = r.Path
	}
	return g.PushBlockEnv(ctx, paths, base)
}

// Base returns the commit of the repository's base branch: from the ref
// files when they say (branchOf), else `git rev-parse --verify`.
func (g *Repos) Base(ctx context.Context, repo *spec.Repo) (string, error) {
	return g.branchCommit(ctx, repo.Path, repo.Base)
}

// branchCommit is the commit of refs/heads/<branch> of the repository at
// repo (branchOf, else git), an error when there is none.
func (g Git) branchCommit(ctx context.Context, repo, branch string) (string, error) {
	if sha, err := branchOf(repo, branch); err == nil && sha != "" {
		return sha, nil
	}
	out, err := g.Run(ctx, repo, "rev-parse", "--verify", "refs/heads/"+branch+"^{commit}")
	return strings.TrimSpace(out), err
}

// RemoteHosts returns the network hosts of the repositories' remotes
// (gitint.RemoteHosts).
func (g *Repos) RemoteHosts(ctx context.Context, repos []*spec.Repo) []string {
	paths := make([]string, len(repos))
	for i, r := range repos {
		paths[i] = r.Path
	}
	return g.Git.RemoteHosts(ctx, paths)
}
