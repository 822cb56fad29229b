package codex

import (
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/gitdirs"
)

// Args returns the command-line arguments of one run of `codex exec`
// (0.171.0) for session s: a new thread, or with thread set the next turn
// of that thread (`codex exec … resume THREAD -`, which takes the same
// options). schemaFile is the strict report schema (StrictSchema) for
// --output-schema; model is the model ("" for the CLI's default). The
// prompt is read from standard input ("-"): no argument-length limit.
// Every run turns off the CLI's plugins and analytics (else it looks up
// github.com and chatgpt.com), names the provider and bounds its retries
// (a provider of the user's config.toml; the built-in "openai" keeps the
// CLI's own bounds, which cadence cannot override without redefining it),
// and sets the sandbox: none for an agent with sandbox = false, "read-only"
// for a read-only step, else "workspace-write" writable in the session's
// worktrees, their git dirs (without which git cannot commit in a linked
// worktree) and the agent's writable_roots, and NOT in /tmp and $TMPDIR,
// which the CLI's workspace-write makes writable by default (a push to a
// repository there would land): the session's own temp folder
// (SessionTemp) is a writable root instead.
func Args(s agent.Session, set *Settings, model, schemaFile, thread string) []string {
	args := []string{"exec", "--json", "--output-schema", schemaFile, "--disable", "plugins",
		"-c", "analytics.enabled=false", "-c", "model_provider=" + strconv.Quote(set.Provider)}
	if set.Provider != DefaultProvider {
		p := "model_providers." + set.Provider + "."
		n := strconv.Itoa(set.Retries)
		args = append(args, "-c", p+"request_max_retries="+n, "-c", p+"stream_max_retries="+n)
	}
	if model != "" {
		args = append(args, "-m", model)
	}
	switch {
	case s.Agent != nil && s.Agent.NoSandbox:
		args = append(args, "-c", `sandbox_mode="danger-full-access"`)
	case s.ReadOnly:
		args = append(args, "-c", `sandbox_mode="read-only"`)
	default:
		args = append(args, "-c", `sandbox_mode="workspace-write"`,
			"-c", "sandbox_workspace_write.writable_roots="+tomlList(writableRoots(s, set)),
			"-c", "sandbox_workspace_write.exclude_slash_tmp=true",
			"-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true")
	}
	if thread != "" {
		args = append(args, "resume", thread)
	}
	return append(args, "-")
}

// SessionTemp is the temp folder of a write session in Codex's sandbox,
// made beside its logs (logPrefix+".tmp"), its TMPDIR and a writable root.
func SessionTemp(logPrefix string) string { return logPrefix + ".tmp" }

// sandboxedWrite says whether session s runs in the workspace-write
// sandbox (Args).
func sandboxedWrite(s agent.Session) bool {
	return !(s.Agent != nil && s.Agent.NoSandbox) && !s.ReadOnly
}

// writableRoots are the folders a write session may write to besides its
// folder: its neighbours' worktrees, every worktree's git dir and common
// git dir, its temp folder (SessionTemp) and the agent's writable_roots.
func writableRoots(s agent.Session, set *Settings) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for i, w := range append([]string{s.Dir}, s.AddDirs...) {
		if w == "" {
			continue
		}
		if i > 0 {
			add(gitdirs.Real(w))
		}
		if own, common, err := gitdirs.Read(w); err == nil {
			add(own)
			add(common)
		}
	}
	if s.LogPrefix != "" {
		add(gitdirs.Real(SessionTemp(s.LogPrefix)))
	}
	for _, r := range set.WritableRoots {
		add(r)
	}
	return out
}

// tomlList is a TOML array of strings (strconv.Quote's escapes are TOML's
// for the paths cadence makes).
func tomlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// modelOf is the model of session s: the step's (s.Model: the lot's model
// or review_model, which spec leaves empty for an agent not of kind
// claude when the wave file names none), else the agent's model setting
// ("" for the CLI's default).
func modelOf(s agent.Session, set *Settings) string {
	if s.Model != "" {
		return s.Model
	}
	return set.Model
}
