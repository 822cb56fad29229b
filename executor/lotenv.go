package executor

import (
	"os"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// childEnv is the environment a lot adds, after the inherited one
// (Options.Env) and the step marks, to every child process of its steps:
// agent sessions, test gates and its run command, run in the worktree of
// repo ("" for the lot's own repository, else a neighbour's name). It is
// the wave's guard environment (runner.stepGuardEnv), the lot's env
// variables (spec.Lot.Env: its own over its repository's over the
// defaults'), and PATH: the guard's folder first (when the guard sets
// one), then the lot's path_prepend folders (the lot's, its
// repository's, the defaults'), then the toolchain folders the plan
// resolved for repo (planner.RepoPlan.ToolchainPath, from .nvmrc), then
// the inherited PATH. The values never reach cadence's own environment.
func (lr *lotRun) childEnv(repo string) []string {
	own := lr.n.lot.Repo
	if repo == "" && own != nil {
		repo = own.Name
	}
	return lotEnv(lr.guardEnv, lr.r.o.Env, lr.n.lot.Env, lr.r.toolchainPath(repo))
}

// toolchainPath is the toolchain folders the plan resolved for the
// repository named repo; nil for none (or no plan, or offline).
func (r *runner) toolchainPath(repo string) []string {
	if r.o.Plan == nil || repo == "" {
		return nil
	}
	for _, rp := range r.o.Plan.Repos {
		if rp.Name == repo {
			return rp.ToolchainPath
		}
	}
	return nil
}

// lotEnv builds childEnv's entries from the guard environment, the
// inherited environment (for its PATH), the lot's Env and the toolchain
// folders. Variables come sorted by name, so that the environment of a
// step is the same from run to run.
func lotEnv(guard, inherited []string, e spec.Env, toolchain []string) []string {
	out := append([]string{}, guard...)
	for _, name := range e.Names() {
		out = append(out, name+"="+e.Vars[name])
	}
	first := append(append([]string{}, e.PathPrepend...), toolchain...)
	if len(first) == 0 {
		return out
	}
	base, hasBase := lastValue(inherited, "PATH")
	// The guard's PATH is its folder before the inherited PATH
	// (gitint.PushBlockEnv): the guard stays first.
	var head []string
	if gp, ok := lastValue(guard, "PATH"); ok {
		if hasBase && strings.HasSuffix(gp, string(os.PathListSeparator)+base) {
			head = []string{strings.TrimSuffix(gp, string(os.PathListSeparator)+base)}
		} else {
			base, hasBase = gp, true
		}
	}
	parts := append(head, first...)
	if hasBase && base != "" {
		parts = append(parts, base)
	}
	return append(out, "PATH="+strings.Join(parts, string(os.PathListSeparator)))
}

// lastValue is the value of the last entry of env that sets name, the one
// a process sees.
func lastValue(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
