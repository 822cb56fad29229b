package planner

import (
	"fmt"
	"slices"
	"strings"

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

// toolchainCause is why repo r's toolchain cannot be resolved, as a plan
// shows it: f.ToolchainErr, or a note that it is not shown when the
// repo's path is sensitive (the error may quote it). "" when it can.
func toolchainCause(r *spec.Repo, f RepoFacts) string {
	switch {
	case f.ToolchainErr == nil:
		return ""
	case r.Sensitive.Has("path"):
		return "its error is not shown: the repo's path is sensitive"
	}
	return f.ToolchainErr.Error()
}

// refuseToolchains refuses, with the reason, the pending lots that work
// in a repository whose toolchain file cannot be resolved (unresolved:
// repository to cause, toolchainCause): they would run with whatever tool
// PATH finds, which is what the file is there to prevent (no silent
// fallback). Each such lot becomes ActionRefused, its dependents
// ActionBlocked; the wave's other lots run. One warning per repository
// names its refused lots (WarnToolchain, not refusing the apply).
func (b *builder) refuseToolchains(unresolved map[*spec.Repo]string) {
	if len(unresolved) == 0 {
		return
	}
	refused := map[*spec.Repo][]string{}
	for _, l := range b.selected {
		lp := b.actions[l]
		if !lp.Action.Pending() {
			continue
		}
		var why []string
		for _, r := range l.Repos() {
			if cause, ok := unresolved[r]; ok {
				why = append(why, fmt.Sprintf("repo %s's toolchain cannot be resolved: %s", r.Name, cause))
				refused[r] = append(refused[r], l.ID)
			}
		}
		if len(why) > 0 {
			lp.Action, lp.ResumeAt, lp.Reason = ActionRefused, nil, strings.Join(why, "; ")
		}
	}
	for _, r := range b.cfg.Repos {
		cause, ok := unresolved[r]
		if !ok {
			continue
		}
		ids := refused[r]
		b.warn(Warning{Kind: WarnToolchain, Subject: r.Name, LotIDs: ids,
			Message: fmt.Sprintf("repo %s's toolchain cannot be resolved, so its lots (%s) are refused and their dependents blocked; the others run: %s", r.Name, shortList(ids, 5), cause)})
	}
	b.blockDependents()
}
