package claude

// What a session loads from the repository it works in. Claude Code
// 2.1.328, started in a folder (measured with the real CLI against the
// fake API: cmd/cadence/e2e_projectconfig_test.go), loads by default:
//
//	file (in the working folder)            what it can run          cadence's session
//	.mcp.json (also in every parent folder) MCP servers: commands,   not loaded (--strict-mcp-config,
//	                                        outside the sandbox      --mcp-config with no server)
//	.claude/settings.json                   hooks (PreToolUse,       not loaded (--setting-sources user)
//	                                        PostToolUse,
//	                                        SessionStart, Stop, …),
//	                                        apiKeyHelper (run even
//	                                        with ANTHROPIC_API_KEY
//	                                        set), env, allow rules,
//	                                        statusLine (not run by -p)
//	.claude/settings.local.json             the same                 not loaded (--setting-sources user)
//	.claude/skills/, .claude/commands/,     prompts the model may    not loaded (they come with the
//	.claude/agents/, .claude/output-styles/ invoke, with hooks and   project source)
//	                                        tool rules of their own
//	CLAUDE.md, .claude/CLAUDE.md,           text                     loaded (--add-dir of the working
//	.claude/rules/*.md                                               folder with
//	                                                                 CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD)
//	CLAUDE.local.md; CLAUDE.md of parents   text                     not loaded (local source; parents)
//
// The folders of --add-dir (neighbour worktrees) give their skills,
// commands and agents by default, and, with the variable above, their
// CLAUDE.md; with the project source off, the skills, commands and agents
// go and CLAUDE.md stays. .lsp.json and .claude-plugin/ were not seen
// loaded by a -p session; a project's plugins come from its settings
// (enabledPlugins), which are not loaded. The user's own settings
// (~/.claude/settings.json: the lead's hooks, helpers, rules) stay: they
// are the lead's; the user's MCP servers (~/.claude.json) do not, since
// they run outside the sandbox. --settings (cadence's sandbox) is always
// loaded, whatever --setting-sources says.

// settingSources is the --setting-sources value of every session: the
// user's settings only, not the project's (.claude/settings.json) nor the
// local ones (.claude/settings.local.json), which the repository, an
// earlier lot or the session itself may have written.
const settingSources = "user"

// noMCPServers is the --mcp-config of every session: no server. With
// --strict-mcp-config the CLI then starts none (neither a .mcp.json of
// the working folder or its parents nor the user's).
const noMCPServers = `{"mcpServers":{}}`

// claudeMDEnv makes the CLI read the CLAUDE.md files of the --add-dir
// folders, the working folder's among them (see isolationArgs): the
// project's instructions reach the model with the project's settings off.
const claudeMDEnv = "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1"

// isolationArgs are the flags that keep the repository's configuration
// out of session s: the user's settings only, no MCP server, and the
// working folder as an --add-dir so that its CLAUDE.md is read (with
// claudeMDEnv). --mcp-config takes several values: the flag after it
// ends them.
func isolationArgs(dir string) []string {
	args := []string{"--setting-sources", settingSources, "--mcp-config", noMCPServers, "--strict-mcp-config"}
	if dir != "" {
		args = append(args, "--add-dir", dir)
	}
	return args
}

// projectConfig are the files of a repository Claude Code loads as its
// configuration and can run as commands, or that widen what a session
// may do: the paths, relative to any folder of the repository, that
// ProjectConfig reports (a trailing "/" for everything under a folder).
// cadence's sessions do not load them (isolationArgs); the lead's own
// Claude Code does, once a lot's change reaches the base.
var projectConfig = []string{
	".mcp.json",
	".lsp.json",
	".claude/settings.json",
	".claude/settings.local.json",
	".claude/hooks/",
	".claude/agents/",
	".claude/commands/",
	".claude/skills/",
	".claude/output-styles/",
	".claude/workflows/",
	".claude-plugin/",
}

// ProjectConfig implements agent.Configured.
func (*Adapter) ProjectConfig() []string { return append([]string(nil), projectConfig...) }
