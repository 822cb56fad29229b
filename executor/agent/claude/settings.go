package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/gitdirs"
)

// fileTools are the CLI's tools that write files. They run in the CLI's
// own process, outside the OS sandbox: only permission rules confine them.
// An `Edit(path)` rule covers all of them.
var fileTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}

// settings is the --settings document of a sandboxed session.
type settings struct {
	Permissions struct {
		Allow []string `json:"allow,omitempty"`
		// Deny are `Read(//<folder>/**)` rules, one per s.DenyRead: the
		// Read tool runs outside the OS sandbox (the CLI also adds them
		// to the sandbox's denyRead).
		Deny []string `json:"deny,omitempty"`
	} `json:"permissions"`
	Sandbox struct {
		Enabled bool `json:"enabled"`
		// FailIfUnavailable makes the CLI refuse to start rather than run
		// the commands unsandboxed when its sandbox cannot start.
		FailIfUnavailable bool `json:"failIfUnavailable"`
		// AutoAllowBashIfSandboxed runs a sandboxed Bash call without a
		// permission prompt (deny rules still hold: Bash(git push:*)); set
		// when the agent allows Bash anyway.
		AutoAllowBashIfSandboxed bool `json:"autoAllowBashIfSandboxed"`
		// AllowUnsandboxedCommands false makes the CLI ignore the Bash
		// tool's dangerouslyDisableSandbox parameter, and (in --settings)
		// ignore the sandbox values of the other settings sources
		// (excludedCommands, allowWrite, …); the project's are not
		// loaded at all (projectconfig.go).
		AllowUnsandboxedCommands bool `json:"allowUnsandboxedCommands"`
		Network                  struct {
			AllowedDomains []string `json:"allowedDomains"`
			// DeniedDomains are refused even though allowedDomains
			// matches: the hosts of the repositories' remotes. The
			// CLI 2.1 takes an explanation per entry only in its
			// runtime's own config (deniedDomainReasons), not in
			// settings: a refused command sees a 403 from the proxy.
			DeniedDomains []string `json:"deniedDomains,omitempty"`
		} `json:"network"`
		Filesystem struct {
			AllowWrite []string `json:"allowWrite,omitempty"`
			DenyWrite  []string `json:"denyWrite,omitempty"`
			// DenyRead are s.DenyRead: no sandboxed command reads them.
			DenyRead []string `json:"denyRead,omitempty"`
		} `json:"filesystem"`
	} `json:"sandbox"`
}

// sandboxSettings returns the --settings document that runs s's Bash calls
// in Claude Code's sandbox, writable exactly where the lot's work goes:
//
//   - the lot's worktrees (s.Dir, s.AddDirs), each with its own git dir
//     (<common>/worktrees/<id>) and its repository's common dir (objects
//     and refs: commits need them);
//   - in each common dir, read-only still: config, config.worktree, hooks,
//     info, remotes, branches, objects/info/alternates (what the CLI
//     protects in its working folder's repository, here for every
//     repository), cadence's own folder cadence/ (its guard hooks and
//     configuration), the main worktree's HEAD and index, and the other
//     worktrees' git dirs; in each worktree git dir its commondir, gitdir
//     and config.worktree, and the worktree's .git file.
//
// s.DenyRead (the machine's steering keys) are unreadable: denyRead for
// the sandboxed commands, a Read deny rule for the Read tool.
//
// Only paths that exist are listed (the CLI mounts a placeholder over a
// missing one). cache, when set, is writable too: the build tools' cache
// of sandboxed sessions (cacheEnv). Besides, the CLI keeps its own temp
// folder writable (TMPDIR, /tmp/claude-<uid>) and ~/.npm/_logs.
//
// The network is open to every host (allowedDomains "*": lots download
// modules) but the hosts of the remotes of the session's repositories
// (s.DenyHosts, deniedDomains, every port): the CLI's proxy refuses a
// sandboxed command's connection to them before it is made, so that a push
// over https, ssh or git:// fails whatever git's configuration says (and
// a fetch from them fails too: submodules, `go get` without a module
// proxy). A push to a repository on this machine is stopped by the
// read-only file system.
//
// fileEdits are `Edit(//<worktree>/**)` rules, one per worktree: what a
// bare file tool in the agent's allowed tools becomes (see Args), since
// the file tools do not run in the sandbox.
//
// A read-only session (s.ReadOnly: precheck, review) gets none of the
// above writable: its worktrees, their git dirs and common dirs are all
// in denyWrite (the CLI would make the working folder and its git dir
// writable by itself), so its Bash calls write only the CLI's temp folder
// and the cache: tests run, the tree and the repository stay as they were
// (readonly.go).
func sandboxSettings(s agent.Session, fileEdits bool, cache string) ([]byte, error) {
	var st settings
	sb := &st.Sandbox
	sb.Enabled, sb.FailIfUnavailable = true, true
	// Only where the agent allows Bash already: otherwise it would widen
	// the agent's permissions (an agent allowed `Bash(go test:*)` only).
	sb.AutoAllowBashIfSandboxed = s.Agent != nil && slices.Contains(settingsOf(s.Agent).AllowedTools, "Bash")
	sb.Network.AllowedDomains = []string{"*"}
	for _, h := range s.DenyHosts {
		if deniable(h) {
			sb.Network.DeniedDomains = append(sb.Network.DeniedDomains, h)
		}
	}
	var allow, deny []string
	seen := map[string]bool{}
	add := func(list *[]string, p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			*list = append(*list, p)
		}
	}
	addIfExists := func(list *[]string, p string) {
		if _, err := os.Lstat(p); err == nil {
			add(list, p)
		}
	}
	for _, w := range worktrees(s) {
		if s.ReadOnly {
			// The CLI makes the working folder and its git dir writable
			// by itself: denied here, they are read-only, and so is
			// every other worktree's.
			add(&deny, w)
			if own, common, err := gitdirs.Read(w); err == nil {
				add(&deny, own)
				add(&deny, common)
			}
			continue
		}
		add(&allow, w)
		if fileEdits {
			st.Permissions.Allow = append(st.Permissions.Allow, "Edit(/"+w+"/**)")
		}
		own, common, err := gitdirs.Read(w)
		if err != nil {
			continue
		}
		linked := own != common
		if linked {
			add(&allow, own)
			add(&allow, common)
			addIfExists(&deny, filepath.Join(w, ".git"))
			for _, f := range []string{"commondir", "gitdir", "config.worktree"} {
				addIfExists(&deny, filepath.Join(own, f))
			}
			for _, f := range []string{"HEAD", "index"} {
				addIfExists(&deny, filepath.Join(common, f))
			}
		}
		for _, f := range []string{"config", "config.worktree", "hooks", "info", "remotes", "branches",
			filepath.Join("objects", "info", "alternates"), "cadence"} {
			addIfExists(&deny, filepath.Join(common, f))
		}
		others, _ := os.ReadDir(filepath.Join(common, "worktrees"))
		for _, o := range others {
			if p := filepath.Join(common, "worktrees", o.Name()); p != own {
				addIfExists(&deny, p)
			}
		}
	}
	if cache != "" {
		add(&allow, gitdirs.Real(cache))
	}
	sb.Filesystem.AllowWrite, sb.Filesystem.DenyWrite = allow, deny
	for _, p := range s.DenyRead {
		sb.Filesystem.DenyRead = append(sb.Filesystem.DenyRead, p)
		rule := "Read(/" + p + "/**)"
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			rule = "Read(/" + p + ")" // a file (a worker's credentials)
		}
		st.Permissions.Deny = append(st.Permissions.Deny, rule)
	}
	return json.Marshal(st)
}

// deniable says whether the CLI takes host h in deniedDomains (2.1.328's
// settings check: a bracketed IPv6 literal, "localhost", or a name with a
// dot inside; the CLI refuses a settings file with any other entry). A
// single-label host (a LAN server's short name) is left out: a push to it
// is stopped by git's configuration and hooks only, and detected.
func deniable(h string) bool {
	switch {
	case strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]"), h == "localhost":
		return true
	}
	return strings.Contains(h, ".") && !strings.HasPrefix(h, ".") && !strings.HasSuffix(h, ".") &&
		!strings.ContainsAny(h, "*:/ ")
}

// worktrees are the session's folders, s.Dir first, as absolute paths
// with symbolic links resolved (the sandbox mounts real paths), each once.
func worktrees(s agent.Session) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range append([]string{s.Dir}, s.AddDirs...) {
		if d == "" {
			continue
		}
		d = gitdirs.Real(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// mainWorktree is the main worktree of the repository whose common dir is
// common (its parent, when common is a folder named .git), or "".
func mainWorktree(common string) string {
	if filepath.Base(common) != ".git" {
		return ""
	}
	return filepath.Dir(common)
}
