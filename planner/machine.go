package planner

import (
	"encoding/json"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// Machine gathers facts about the machine for a plan: the repositories and
// the agent CLI. Implementations live outside the planner (gitint, the CLI);
// a nil Machine makes an offline plan.
type Machine interface {
	// Repo inspects a repository.
	Repo(r *spec.Repo) RepoFacts
	// Agent looks for an agent CLI and asks its version.
	Agent(a *spec.Agent) AgentFacts
}

// RepoFacts is what preflight found about a repository.
type RepoFacts struct {
	// Err is set when the repository could not be inspected at all.
	Err error
	// Exists and IsGit say whether the path is there and is a git repository.
	Exists, IsGit bool
	// BaseSHA is the commit of the base branch; "" when the branch is missing.
	BaseSHA string
	// Dirty lists tracked files with uncommitted changes.
	Dirty []string
	// HeldBy describes another live wave holding the repository ("" if none).
	HeldBy string
	// Branches are the repository's branches named cadence or under
	// cadence/ (names without refs/heads/; nil for none): what the lot
	// branches are checked against (branches.go).
	Branches []string
	// ForeignPrePush is the path of a pre-push hook that is not cadence's
	// (informational: cadence's guard chains a repository's hooks and
	// refuses no repository for one).
	ForeignPrePush string
	// Gitmodules says whether the base has a .gitmodules (its lots'
	// worktrees get their submodules under the default submodules).
	Gitmodules bool
	// ProbableTest is the test command the repository's files suggest.
	ProbableTest string
	// Toolchain is what the repository's toolchain files resolved to
	// ("node v22.22.3 from .nvmrc"; "" when it has none), ToolchainPath
	// the folders they put before PATH and ToolchainEnv the other
	// variables they set (mise's); ToolchainErr says why a toolchain file
	// there cannot be resolved (internal/toolchain).
	Toolchain     string
	ToolchainPath []string
	ToolchainEnv  map[string]string
	ToolchainErr  error
}

// HoldsMachine is a Machine that also knows how many holds (`cadence
// hold`, executor/slots) are live on the machine: each takes one session
// slot from every wave, so the plan's sessions at once are the cap less
// them. A Machine without it (and an offline plan) counts none.
type HoldsMachine interface {
	Machine
	// LiveHolds is the number of live holds (0 when unknown).
	LiveHolds() int
}

// AgentFacts is what was found of an agent CLI.
type AgentFacts struct {
	// Command is the command looked for; Path where it was found ("" if not).
	Command, Path string
	// Version is the version the CLI reported ("" if unknown).
	Version string
	// Err is set when the CLI was found but did not answer.
	Err error
	// VersionArgs are the arguments that asked the version ("--version"),
	// for messages.
	VersionArgs string
	// MinVersion is the oldest version the agent's adapter drives ("" for
	// no minimum); Install says how to get the CLI when it is missing. Both
	// come from the adapter (executor/agent.Tool), through the Machine.
	MinVersion, Install string
	// SandboxMissing says why the agent's OS sandbox cannot be used on this
	// machine ("bubblewrap (bwrap) not found", "not Linux", …); "" when it
	// can. The adapter decides (executor/agent), through the Machine.
	SandboxMissing string
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// VersionAtLeast compares dotted versions found in two strings.
func VersionAtLeast(have, want string) bool {
	h, w := versionRE.FindStringSubmatch(have), versionRE.FindStringSubmatch(want)
	if h == nil || w == nil {
		return false
	}
	for i := 1; i <= 3; i++ {
		a, _ := strconv.Atoi(h[i])
		b, _ := strconv.Atoi(w[i])
		if a != b {
			return a > b
		}
	}
	return true
}

// ProbableTestCommand guesses a repository's test command from its files:
// go.mod → go test ./..., package.json with scripts.test → npm test, a
// pyproject.toml naming pytest → pytest, Cargo.toml → cargo test, pom.xml →
// mvn test, a Makefile with a test target → make test. It returns "" when
// nothing fits.
func ProbableTestCommand(fsys fs.FS) string {
	has := func(name string) bool { _, err := fs.Stat(fsys, name); return err == nil }
	read := func(name string) string { b, _ := fs.ReadFile(fsys, name); return string(b) }
	switch {
	case has("go.mod"):
		return "go test ./..."
	case has("package.json"):
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal([]byte(read("package.json")), &pkg) == nil && pkg.Scripts["test"] != "" {
			return "npm test"
		}
	}
	switch {
	case has("pyproject.toml") && strings.Contains(read("pyproject.toml"), "pytest"):
		return "pytest"
	case has("Cargo.toml"):
		return "cargo test"
	case has("pom.xml"):
		return "mvn test"
	}
	for _, mk := range []string{"Makefile", "makefile", "GNUmakefile"} {
		if has(mk) && regexp.MustCompile(`(?m)^test\s*:`).MatchString(read(mk)) {
			return "make test"
		}
	}
	return ""
}
