package executor

import (
	"os"
	"strings"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// childEnv is the environment a lot adds, after the inherited one
// (Options.Env) and the step marks, to every child process of its steps:
// agent sessions, test gates and its run command, run in the worktree of
// repo ("" for the lot's own repository, else a neighbour's name). It is
// the wave's guard environment (runner.stepGuardEnv), the variables the
// toolchain of repo sets (planner.RepoPlan.ToolchainEnv: mise's) under
// the lot's env variables (spec.Lot.Env: its own over its repository's
// over the defaults'), and PATH: the guard's folder first (when the guard
// sets one), then the lot's path_prepend folders (the lot's, its
// repository's, the defaults'), then the toolchain folders the plan
// resolved for repo (planner.RepoPlan.ToolchainPath, from .nvmrc and
// mise), then the inherited PATH. The values never reach cadence's own
// environment.
func (lr *lotRun) childEnv(repo string) []string {
	own := lr.n.lot.Repo
	if repo == "" && own != nil {
		repo = own.Name
	}
	tc := lr.r.toolchain(repo)
	return lotEnv(lr.guardEnv, lr.r.o.Env, lr.n.lot.Env, tc.ToolchainPath, tc.ToolchainEnv)
}

// toolchain is the plan of the repository named repo, for its toolchain
// (folders and variables); the zero RepoPlan for none (or no plan).
func (r *runner) toolchain(repo string) planner.RepoPlan {
	if r.o.Plan == nil || repo == "" {
		return planner.RepoPlan{}
	}
	for _, rp := range r.o.Plan.Repos {
		if rp.Name == repo {
			return rp
		}
	}
	return planner.RepoPlan{}
}

// lotEnv builds childEnv's entries from the guard environment, the
// inherited environment (for its PATH), the lot's Env and the toolchain
// folders and variables (a variable the lot's Env sets too is the lot's).
// Variables come sorted by name, the toolchain's first, so that the
// environment of a step is the same from run to run.
func lotEnv(guard, inherited []string, e spec.Env, toolchain []string, tcEnv map[string]string) []string {
	out := append([]string{}, guard...)
	for _, name := range (spec.Env{Vars: tcEnv}).Names() {
		if _, own := e.Vars[name]; !own {
			out = append(out, name+"="+tcEnv[name])
		}
	}
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
