package gitint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/internal/layout"
)

// PushBlockEnv returns the guard environment of a step working in the
// repositories: entries added to base (the step's environment, which
// StepEnviron has scrubbed) that reach every git process the step starts,
// through git's GIT_CONFIG_COUNT mechanism (the user's configuration is
// never edited), continuing base's own GIT_CONFIG_* entries:
//
//   - protocol.ext.allow = never;
//   - gc.writeCommitGraph = false, fetch.writeCommitGraph = false,
//     gc.auto = 0, maintenance.auto = false;
//   - url.cadence-no-push::<U>.pushInsteadOf = <U> for every URL and push
//     URL U of the repositories' remotes (a local path also as absolute
//     path and file:// URL): a push to one of them fails from any
//     repository, a clone the step made included, while a test suite's
//     pushes to its own throwaway repositories still work;
//   - includeIf.gitdir:<common>/.path = <guard>/repo.config for each
//     repository whose guard is installed (InstallGuard): the guard config
//     (cadence's hooks, every push refused) in every worktree of the
//     repository, the lead's checkout reached with `git -C` included, and
//     in no other repository;
//   - PATH with the guard's bin folder first, where git finds
//     git-remote-cadence-no-push, which says why a push is refused (without
//     it git says "'remote-cadence-no-push' is not a git command"; the push
//     fails either way). Left alone when base has no PATH.
//
// A step can lift these (`env -u GIT_CONFIG_COUNT`); the include entries of
// lot worktrees (GuardWorktree) still hold there. Nothing is returned when
// there is nothing to add.
func (g Git) PushBlockEnv(ctx context.Context, repos []string, base []string) []string {
	n := 0
	path, hasPath := "", false
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			n, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, hasPath = v, true
		}
	}
	var env []string
	add := func(k, v string) {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n, k), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, v))
		n++
	}
	seen := map[string]bool{}
	bin := ""
	for _, repo := range repos {
		common, err := g.commonDir(ctx, repo)
		if err != nil {
			continue
		}
		remotes, _ := g.remoteURLs(ctx, repo)
		for _, r := range remotes {
			for _, u := range urlVariants(repo, r.URL) {
				if !seen[u] {
					seen[u] = true
					add("url."+noPushScheme+"::"+u+".pushInsteadOf", u)
				}
			}
		}
		guard := layout.RepoGuard(common)
		if _, err := os.Stat(filepath.Join(guard, "repo.config")); err == nil && !seen[common] {
			seen[common] = true
			// <common>/ matches what is inside (linked worktrees,
			// submodules), not the main worktree's git dir itself.
			add("includeIf.gitdir:"+globEscape(common)+".path", filepath.Join(guard, "repo.config"))
			add("includeIf.gitdir:"+globEscape(common)+"/.path", filepath.Join(guard, "repo.config"))
			if bin == "" {
				bin = filepath.Join(guard, "bin")
			}
		}
	}
	if len(env) == 0 {
		return nil
	}
	add("protocol.ext.allow", "never")
	// A step's git writes no commit-graph: one that appears during a
	// sandboxed session is then the session's own, and is set aside
	// (executor/agent/claude graphs.go).
	add("gc.writeCommitGraph", "false")
	add("fetch.writeCommitGraph", "false")
	// Nor a detached `git gc --auto` or maintenance: the step's tree is
	// ended with the step, and a gc killed halfway leaves gc.log.lock in
	// the lead's repository, which stops every later auto gc there (the
	// lead's own git keeps doing its housekeeping).
	add("gc.auto", "0")
	add("maintenance.auto", "false")
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(n))
	if bin != "" && hasPath {
		env = append(env, "PATH="+bin+string(os.PathListSeparator)+path)
	}
	return env
}

// urlVariants returns the forms a push to the remote URL u may take: u
// itself, and for a local repository its absolute path (relative paths are
// the repository's, at repo, and are not kept as written: elsewhere they
// name other repositories), with links resolved, and as file:// URLs.
func urlVariants(repo, u string) []string {
	p, local := localPath(u)
	if !local {
		return []string{u}
	}
	var out []string
	if filepath.IsAbs(p) || strings.HasPrefix(u, "file://") {
		out = append(out, u)
	} else {
		p = filepath.Join(repo, p)
	}
	p = filepath.Clean(p)
	paths := []string{p}
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		paths = append(paths, real)
	}
	for _, p := range paths {
		out = append(out, p, "file://"+p)
	}
	return out
}

// localPath says whether a remote URL names a local repository (git's
// rule, git-clone(1) "GIT URLS": a file:// URL, or no "://" and no ':'
// before the first '/'), and its path.
func localPath(u string) (string, bool) {
	if p, ok := strings.CutPrefix(u, "file://"); ok {
		return p, true
	}
	if strings.Contains(u, "://") {
		return "", false
	}
	colon, slash := strings.IndexByte(u, ':'), strings.IndexByte(u, '/')
	if colon >= 0 && (slash < 0 || colon < slash) {
		return "", false // scp-like host:path
	}
	return u, true
}
