package toolchain

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// MiseFiles are the toolchain files mise resolves, as named at the root of
// a repository: asdf's .tool-versions and mise's own configuration
// (https://mise.jdx.dev/configuration.html). A repository with one of them
// is resolved through `mise`.
var MiseFiles = []string{".tool-versions", "mise.toml", ".mise.toml"}

// Files are every toolchain file a repository may hold, .nvmrc first: the
// inputs of a saved plan (a change to one makes it stale).
var Files = append([]string{".nvmrc"}, MiseFiles...)

// MiseRunner runs `mise ARGS...` with dir as its working folder and
// returns its standard output; its error says why it failed (mise's
// standard error, its exit status). The caller (internal/cli) starts the
// process, bounded in time, with cadence's environment; nil means mise is
// not installed.
type MiseRunner func(dir string, args ...string) ([]byte, error)

// Options are what Repo needs of the machine.
type Options struct {
	// NVMDir is $NVM_DIR ("" for Home/.nvm); Home the user's home folder.
	NVMDir, Home string
	// Mise runs mise (nil: it is not installed).
	Mise MiseRunner
	// Path is the PATH the lots inherit: the folders of mise's PATH that
	// are not in it are the ones mise puts first.
	Path string
}

// Resolved is what the toolchain files of a repository resolved to.
type Resolved struct {
	// Toolchains are the tools, .nvmrc's first, then mise's by name.
	Toolchains []Toolchain
	// Path are the folders to put before PATH, in order: .nvmrc's Node,
	// then those `mise env` puts first.
	Path []string
	// Env are the other variables `mise env` sets (a tool's JAVA_HOME, a
	// mise.toml's [env]); nil for none. Their values may be secrets.
	Env map[string]string
	// mise describes what mise resolved, for String ("" without mise).
	mise string
}

// String describes r for a plan: "node v22.22.3 from .nvmrc; node
// 20.11.1, python 3.12.2 from .tool-versions (mise)".
func (r *Resolved) String() string {
	var parts []string
	for _, t := range r.Toolchains {
		if t.File == ".nvmrc" {
			parts = append(parts, t.String())
		}
	}
	if r.mise != "" {
		parts = append(parts, r.mise)
	}
	return strings.Join(parts, "; ")
}

// Repo resolves the toolchain files of the repository at dir: a .nvmrc
// (Resolve, through nvm's folders) and the files of MiseFiles, through
// mise (ResolveMise). It returns nil and no error when the repository
// has none, and an error naming the file and why when one is there but
// cannot be resolved (no silent fallback to the PATH's tool).
func Repo(dir string, o Options) (*Resolved, error) {
	var out Resolved
	nvm, err := Resolve(dir, o.NVMDir, o.Home)
	if err != nil {
		return nil, err
	}
	if nvm != nil {
		out.Toolchains = append(out.Toolchains, *nvm)
		out.Path = append(out.Path, nvm.Bin)
	}
	m, err := ResolveMise(dir, o.Mise, o.Path)
	if err != nil {
		return nil, err
	}
	if m != nil {
		out.Toolchains = append(out.Toolchains, m.Toolchains...)
		out.Path = append(out.Path, m.Path...)
		out.Env, out.mise = m.Env, m.mise
	}
	if nvm == nil && m == nil {
		return nil, nil
	}
	return &out, nil
}

// miseTool is one entry of `mise ls --current --json`: an object of tool
// names, each a list of these (jdx/mise src/cli/ls.rs, JSONToolVersion).
type miseTool struct {
	Version          string `json:"version"`
	RequestedVersion string `json:"requested_version"`
	InstallPath      string `json:"install_path"`
	Source           *struct {
		Type string `json:"type"`
		Path string `json:"path"`
	} `json:"source"`
	Installed bool `json:"installed"`
	Active    bool `json:"active"`
}

// ResolveMise resolves the mise files of the repository at dir (nil and
// no error when it has none) by asking mise, in dir:
//
//   - `mise ls --current --json`: the tools the files ask for, with their
//     version and whether it is installed. A tool the repository's own
//     files ask for that is not installed is an error (`mise env` would
//     leave it out and the lots would run the PATH's one); mise does not
//     install it (cadence does not install tools at plan time).
//   - `mise env --json`: the variables of the environment mise makes (an
//     object of names to values, jdx/mise src/cli/env.rs). The folders
//     of its PATH that are not in path (the inherited PATH) are the ones
//     it puts first, in its order; its other variables are Env (PATH and
//     the names of cadence, git's configuration and mise's own state
//     left out: see skipMiseEnv).
//
// Without mise (run nil), or when mise fails (an untrusted mise.toml, a
// syntax error), the file cannot be resolved: the error says so with
// mise's message.
func ResolveMise(dir string, run MiseRunner, path string) (*Resolved, error) {
	var found []string
	for _, f := range MiseFiles {
		switch _, err := os.Lstat(filepath.Join(dir, f)); {
		case err == nil:
			found = append(found, f)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	files := strings.Join(found, ", ")
	if run == nil {
		return nil, fmt.Errorf("%s: mise is not installed (not found on PATH), so cadence cannot resolve the tools it names: install mise (https://mise.jdx.dev), or remove the file", files)
	}
	out, err := run(dir, "ls", "--current", "--json")
	if err != nil {
		return nil, fmt.Errorf("%s: mise ls --current --json failed: %w", files, err)
	}
	var tools map[string][]miseTool
	if err := json.Unmarshal(out, &tools); err != nil {
		return nil, fmt.Errorf("%s: mise ls --current --json printed no JSON object of tools: %v", files, err)
	}
	res := &Resolved{}
	names := make([]string, 0, len(tools))
	for name := range tools {
		names = append(names, name)
	}
	sort.Strings(names)
	byFile := map[string][]string{}
	var order []string
	for _, name := range names {
		for _, t := range tools[name] {
			if t.Source == nil || !inside(dir, t.Source.Path) {
				continue // not asked for by the repository's files
			}
			file := filepath.Base(t.Source.Path)
			if !t.Installed {
				want := t.RequestedVersion
				if want == "" {
					want = t.Version
				}
				return nil, fmt.Errorf("%s: mise: %s %s is not installed: mise install %s@%s (in the repository)", file, name, want, name, want)
			}
			res.Toolchains = append(res.Toolchains, Toolchain{File: file, Tool: name, Version: t.Version, Bin: t.InstallPath})
			if byFile[file] == nil {
				order = append(order, file)
			}
			byFile[file] = append(byFile[file], name+" "+t.Version)
		}
	}
	out, err = run(dir, "env", "--json")
	if err != nil {
		return nil, fmt.Errorf("%s: mise env --json failed: %w", files, err)
	}
	var env map[string]string
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("%s: mise env --json printed no JSON object of variables: %v", files, err)
	}
	inherited := filepath.SplitList(path)
	for _, d := range filepath.SplitList(env["PATH"]) {
		// Absolute folders only: a relative one would resolve in the
		// lot's worktree, which the agent writes.
		if filepath.IsAbs(d) && !slices.Contains(inherited, d) && !slices.Contains(res.Path, d) {
			res.Path = append(res.Path, d)
		}
	}
	for name, v := range env {
		if skipMiseEnv(name) {
			continue
		}
		if res.Env == nil {
			res.Env = map[string]string{}
		}
		res.Env[name] = v
	}
	var parts []string
	for _, f := range order {
		parts = append(parts, strings.Join(byFile[f], ", ")+" from "+f)
	}
	if len(parts) == 0 {
		parts = []string{"no tool from " + files}
	}
	res.mise = strings.Join(parts, "; ") + " (mise)"
	return res, nil
}

// skipMiseEnv reports whether a variable of `mise env` is not passed on
// as one: PATH (its folders are), HOME, the names cadence owns or guards
// with (CADENCE_*, GIT_*: the push guards, spec's reserved names), those
// mise keeps its own state in (MISE_*, __MISE_*), the agent's connection
// and settings (ANTHROPIC_*, CLAUDE_*), and what makes every process run
// other code (LD_*, BASH_ENV, ENV): a toolchain file is the repository's,
// which a lot may have written.
func skipMiseEnv(name string) bool {
	up := strings.ToUpper(name)
	if up == "PATH" || up == "HOME" || up == "BASH_ENV" || up == "ENV" {
		return true
	}
	for _, p := range []string{"CADENCE_", "GIT_", "MISE_", "__MISE", "CLAUDE_", "ANTHROPIC_", "LD_"} {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

// inside reports whether path is dir or below it, symbolic links
// resolved (mise names its files by their real path).
func inside(dir, path string) bool {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
