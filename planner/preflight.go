package planner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// preflight records the repositories and, with a Machine, checks them and the
// agent CLI (found, answering its version probe, not older than its
// adapter's minimum: the Machine passes those facts in). A repository apply cannot use at all is an error diagnostic
// pointing at its block; what apply refuses but the lead can fix in place (a
// dirty tree) is a refusing warning.
func (b *builder) preflight(m Machine) {
	used := map[*spec.Repo]bool{}
	lots := map[*spec.Repo]int{}
	for _, l := range b.selected {
		if l.Repo != nil {
			lots[l.Repo]++
		}
		if !b.actions[l].Action.Pending() {
			continue
		}
		for _, r := range l.Repos() {
			used[r] = true
		}
	}
	if m != nil {
		b.checkDone(m)
	}
	unresolved := map[*spec.Repo]string{}
	var branches map[*spec.Repo][]string // nil offline
	if m != nil {
		branches = map[*spec.Repo][]string{}
	}
	for _, r := range b.cfg.Repos {
		rp := RepoPlan{Name: r.Name, Path: r.Sensitive.Show("path", r.Path), Base: r.Sensitive.Show("base", r.Base),
			Test: r.Sensitive.Show("test", r.Test), TestTimeout: r.TestTimeout, Parallel: r.Parallel, Lots: lots[r]}
		if m != nil && used[r] {
			f := m.Repo(r)
			b.checkRepo(r, f)
			if b.gitmodules == nil {
				b.gitmodules = map[*spec.Repo]bool{}
			}
			b.gitmodules[r] = f.Gitmodules
			branches[r] = f.Branches
			rp.BaseSHA, rp.ProbableTest = f.BaseSHA, f.ProbableTest
			rp.Toolchain, rp.ToolchainPath, rp.ToolchainEnv = f.Toolchain, f.ToolchainPath, f.ToolchainEnv
			if cause := toolchainCause(r, f); cause != "" {
				rp.ToolchainErr, unresolved[r] = cause, cause
			}
		}
		if used[r] && r.Test == "" {
			msg := fmt.Sprintf("repo %s has no test gate: lots are integrated untested", r.Name)
			if rp.ProbableTest != "" {
				msg += fmt.Sprintf(" (probably: test = %q)", rp.ProbableTest)
			}
			b.warn(Warning{Kind: WarnNoTestGate, Subject: r.Name, Message: msg})
		}
		b.plan.Repos = append(b.plan.Repos, rp)
	}
	b.lotBranches(branches)
	b.refuseToolchains(unresolved)
	b.checkCopies(m)
	// The agents of the lots that still run (not those refused above).
	agents := map[*spec.Agent]bool{}
	for _, l := range b.selected {
		if b.actions[l].Action.Pending() {
			for _, a := range LotAgents(l) {
				agents[a] = true
			}
		}
	}
	b.longCommands(used)
	b.stepSandbox(m)
	b.browsers(m)
	if m == nil {
		b.warn(Warning{Kind: WarnOffline, Message: "offline plan: repositories and the agent CLI were not checked"})
		b.pushes(nil)
		return
	}
	facts := map[*spec.Agent]AgentFacts{}
	defer b.pushes(facts)
	for _, a := range b.cfg.Agents {
		if !agents[a] {
			continue
		}
		f := redactAgent(a, m.Agent(a))
		facts[a] = f
		if b.plan.Agents == nil {
			b.plan.Agents = map[string]AgentFacts{}
		}
		b.plan.Agents[a.Name] = f
		if a.Name == spec.BuiltinAgent || b.plan.Agent.Command == "" {
			b.plan.Agent = f
		}
		switch {
		case f.Path == "":
			cmd := strconv.Quote(f.Command)
			if f.Command == spec.Redacted {
				cmd = spec.Redacted
			}
			msg := fmt.Sprintf("agent %s: command %s not found on PATH", a.Name, cmd)
			if f.Install != "" {
				msg += " (" + f.Install + ")"
			}
			b.warn(Warning{Kind: WarnAgentMissing, Subject: a.Name, Refuses: true, Message: msg})
		case f.Err != nil:
			b.warn(Warning{Kind: WarnAgentMissing, Subject: a.Name, Refuses: true,
				Message: fmt.Sprintf("agent %s: %s failed: %v", a.Name, strings.TrimSpace(f.Path+" "+f.VersionArgs), f.Err)})
		case f.MinVersion != "" && !VersionAtLeast(f.Version, f.MinVersion):
			b.warn(Warning{Kind: WarnAgentOld, Subject: a.Name,
				Message: fmt.Sprintf("agent %s: %s is version %q; cadence needs %s or newer", a.Name, f.Path, f.Version, f.MinVersion)})
		}
	}
}

// redactAgent hides in f what derives from a's sensitive command (the
// agent block's command = ... of a sensitive value): the command, the path
// it was found at and the error of its version probe, which may quote
// them. A command the machine took from elsewhere (an adapter's override,
// CADENCE_CLAUDE_BIN) is not the block's and stays shown.
func redactAgent(a *spec.Agent, f AgentFacts) AgentFacts {
	if !a.Sensitive.Has("command") || f.Command != a.Command {
		return f
	}
	f.Command = spec.Redacted
	if f.Path != "" {
		f.Path = spec.Redacted
	}
	if f.Err != nil {
		f.Err = errors.New("its error is not shown: the agent's command is sensitive")
	}
	return f
}

func (b *builder) checkRepo(r *spec.Repo, f RepoFacts) {
	rng := r.DeclRange
	fail := func(summary, format string, args ...any) {
		b.diags = append(b.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
			Detail: fmt.Sprintf(format, args...), Subject: &rng})
	}
	// A sensitive path or base is not quoted (nor git's error, which
	// quotes the path).
	path, base := r.Sensitive.Show("path", r.Path), r.Sensitive.Show("base", r.Base)
	var cause any = f.Err
	if r.Sensitive.Has("path") || r.Sensitive.Has("base") {
		cause = "git's error is not shown: the repo's path or base is sensitive"
	}
	switch {
	case f.Err != nil:
		fail("Cannot inspect repository", "repo %q (%s): %v.", r.Name, path, cause)
	case !f.Exists:
		fail("Repository not found", "repo %q: %s does not exist (paths are relative to the wave file's folder).", r.Name, path)
	case !f.IsGit:
		fail("Not a git repository", "repo %q: %s is not a git repository.", r.Name, path)
	case f.BaseSHA == "":
		fail("Base branch not found", "repo %q: %s has no branch %q; set base to the branch lots start from.", r.Name, path, base)
	}
	if f.HeldBy != "" {
		fail("Repository held by another wave", "repo %q is in use by %s; one wave per repository at a time.", r.Name, f.HeldBy)
	}
	if len(f.Dirty) > 0 {
		b.warn(Warning{Kind: WarnDirty, Subject: r.Name, Refuses: true, Files: f.Dirty,
			Message: fmt.Sprintf("repo %s has uncommitted changes to %d tracked file(s): commit or stash them", r.Name, len(f.Dirty))})
	}
}

func (b *builder) warn(w Warning) { b.plan.Warnings = append(b.plan.Warnings, w) }

// shortList joins at most n items, saying how many more there are.
func shortList(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}
