package planner

import (
	"fmt"
	"slices"

	"github.com/cadence-run/cadence/spec"
)

// lotEnv is what a plan shows of a lot's environment (LotPlan.Env and
// PathPrepend): the names of its variables, never their values, and its
// path_prepend folders, each Redacted when sensitive.
func lotEnv(l *spec.Lot) (names, path []string) {
	if len(l.Env.Vars) > 0 {
		names = l.Env.Names()
		if l.Sensitive.Has(spec.EnvNames) {
			names = []string{spec.Redacted}
		}
	}
	if len(l.Env.PathPrepend) > 0 {
		path = slices.Clone(l.Env.PathPrepend)
		if l.Sensitive.Has("path_prepend") {
			path = []string{spec.Redacted}
		}
	}
	return names, path
}

// checkToolchain refuses, with the reason, the repository whose toolchain
// file cannot be resolved: its lots would run with whatever tool PATH
// finds, which is what the file is there to prevent (no silent fallback).
func (b *builder) checkToolchain(r *spec.Repo, f RepoFacts) {
	if f.ToolchainErr == nil {
		return
	}
	var cause any = f.ToolchainErr
	if r.Sensitive.Has("path") {
		cause = "its error is not shown: the repo's path is sensitive"
	}
	var ids []string
	for _, l := range b.selected {
		if b.actions[l].Action.Pending() && slices.Contains(l.Repos(), r) {
			ids = append(ids, l.ID)
		}
	}
	b.warn(Warning{Kind: WarnToolchain, Subject: r.Name, Refuses: true, LotIDs: ids,
		Message: fmt.Sprintf("repo %s's toolchain cannot be resolved, so its lots (%s) cannot run: %v", r.Name, shortList(ids, 5), cause)})
}
