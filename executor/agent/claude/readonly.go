package claude

import "strings"

// Read-only sessions (agent.Session.ReadOnly: precheck, review,
// review-recheck) get no tool that writes (docs/running.md: a review reads,
// runs the tests and reports):
//
//   - the file tools (fileTools: Edit, Write, MultiEdit, NotebookEdit) are
//     denied with --disallowedTools, and never passed in --allowedTools,
//     even when the agent's allowed_tools has them (a bare name or a rule
//     such as `Edit(src/**)`). A deny rule wins over every allow rule and
//     every permission mode (shared/reference/claude-cli.md §1).
//   - Bash stays (a reviewer runs the tests and reads git history), but
//     not the git commands that write the tree, the index or refs
//     (readOnlyGitDenied, as `Bash(git <cmd>:*)` rules). Like every Bash
//     prefix rule they are a soft guard (`git -C . commit`, `sh -c '…'`
//     pass them).
//   - With the sandbox (sandboxSettings), the session's worktrees and their
//     git dirs are read-only for every Bash call: only the CLI's own temp
//     folder and the build tools' cache stay writable, so tests run but
//     nothing in the tree or the repository changes, however the command
//     is dressed.
//
// The backstop stays the executor's after-check (executor/agentlot.go
// review): a review that moved a HEAD or left the tree dirty is not
// trusted, whatever the tools allowed.
//
// A denied call is not an error for the CLI: the session goes on and the
// model gets a tool_result with is_error true. With the CLI 2.1.328
// (observed, cmd/cadence/e2e_reports_test.go), a whole-tool deny rule
// takes the tool out of the tools offered to the model, so a read-only
// session's Edit or Write is answered
//
//	<tool_use_error>Error: No such tool available: Edit. Edit is disabled for this session, in subagents as well as here.</tool_use_error>
//
// and is NOT in the result's permission_denials; a denied git command is
// answered "Permission to use Bash with command git commit -qm x has been
// denied." and is in permission_denials; in the sandbox, a redirection
// into the tree fails with "f.txt: Read-only file system" (the command
// ran: no denial). denials.go reads both kinds of refusal from the
// stream; the executor records them on the step and as the lot's
// warnings ("review tried Edit (/…/f.txt): denied").

// readOnlyGitDenied are the git subcommands a read-only session may not
// run: those that write the worktree, the index, refs or the stash, or
// fetch into the repository. Reading ones (log, show, diff, status,
// branch and tag listings, grep, blame) stay allowed.
var readOnlyGitDenied = []string{"add", "am", "apply", "checkout", "cherry-pick", "clean", "commit", "fetch", "merge",
	"mv", "notes", "pull", "rebase", "reset", "restore", "revert", "rm", "stash", "switch", "update-ref", "worktree"}

// readOnlyDenied is what Args adds to --disallowedTools for a read-only
// session: the file tools and the git commands that write.
func readOnlyDenied() []string {
	out := []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}
	for _, c := range readOnlyGitDenied {
		out = append(out, "Bash(git "+c+":*)")
	}
	return out
}

// toolName is the tool a permission rule names: "Edit" for "Edit" and
// "Edit(src/**)".
func toolName(rule string) string {
	name, _, _ := strings.Cut(rule, "(")
	return strings.TrimSpace(name)
}
