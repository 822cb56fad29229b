// Package toolchain resolves a repository's toolchain files to the folders
// (and variables) its processes find the tools with:
// a .nvmrc names a Node version, resolved to the highest matching version
// installed by nvm ($NVM_DIR/versions/node/vX.Y.Z with an executable
// bin/node); a .tool-versions or mise.toml is resolved by mise (`mise ls`,
// `mise env`: mise.go). The planner shows the result per repo and the
// executor puts its folders first on PATH (after the lot's path_prepend)
// for the repository's sessions, test gates and command lots.
//
// It reads files (through internal/safefile) and starts no process of its
// own: the caller (internal/cli's machine) passes NVM_DIR in, and the
// function that runs mise (MiseRunner).
package toolchain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cadence-run/cadence/internal/safefile"
)

// Toolchain is what a repository's toolchain file resolved to.
type Toolchain struct {
	// File is the toolchain file's name in the repository (".nvmrc").
	File string
	// Tool and Version are what it resolved to: "node", "v22.22.3".
	Tool, Version string
	// Bin is the absolute folder holding the tool, put first on PATH;
	// for a tool of mise, its install folder (`mise env` says which of
	// its folders go on PATH: Resolved.Path).
	Bin string
}

// String describes t for a plan: "node v22.22.3 from .nvmrc".
func (t Toolchain) String() string { return t.Tool + " " + t.Version + " from " + t.File }

// maxFile bounds a toolchain file's size (a version is a few bytes).
const maxFile = 4096

// Resolve looks for the toolchain files of the repository at dir and
// resolves them. nvmDir is $NVM_DIR ("" for ~/.nvm, home being the user's
// home folder). It returns nil and no error when the repository has none,
// and an error that says why when a file is there but cannot be resolved
// (no silent fallback to the PATH's tool).
func Resolve(dir, nvmDir, home string) (*Toolchain, error) {
	path := filepath.Join(dir, ".nvmrc")
	// Inside the repository only: a .nvmrc symlinked out of it is refused
	// (its target's content would reach the plan).
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		root = dir
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	data, err := safefile.ReadWithin(root, path, maxFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf(".nvmrc: %w", err)
	}
	if nvmDir == "" {
		if home == "" {
			return nil, errors.New(".nvmrc: neither NVM_DIR nor HOME is set: cannot find nvm's Node versions")
		}
		nvmDir = filepath.Join(home, ".nvm")
	}
	t, err := Node(string(data), nvmDir)
	if err != nil {
		return nil, fmt.Errorf(".nvmrc: %w", err)
	}
	return &t, nil
}

// Node resolves the content of a .nvmrc (one line: "22", "v22", "22.22",
// "v22.22.3"; surrounding blanks and a trailing comment are ignored) to
// the highest version installed under nvmDir/versions/node whose numbers
// start with the written ones and whose bin/node is an executable file.
// An alias (lts/*, lts/iron, node, stable, system) or anything else that
// is not a version prefix is refused: cadence does not run nvm to learn
// what it means (write the version).
func Node(content, nvmDir string) (Toolchain, error) {
	want, err := parsePrefix(content)
	if err != nil {
		return Toolchain{}, err
	}
	root := filepath.Join(nvmDir, "versions", "node")
	entries, err := os.ReadDir(root)
	if err != nil {
		return Toolchain{}, fmt.Errorf("no Node version is installed by nvm (%v): install one matching %q (nvm install %s)", err, want.text, want.text)
	}
	var best version
	bestDir := ""
	for _, e := range entries {
		v, ok := parseVersion(e.Name())
		if !ok || !v.matches(want) || (bestDir != "" && !best.less(v)) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if st, err := os.Stat(filepath.Join(dir, "bin", "node")); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			continue
		}
		best, bestDir = v, dir
	}
	if bestDir == "" {
		return Toolchain{}, fmt.Errorf("no installed Node version matches %q under %s (with an executable bin/node): nvm install %s", want.text, root, want.text)
	}
	return Toolchain{File: ".nvmrc", Tool: "node", Version: best.String(), Bin: filepath.Join(bestDir, "bin")}, nil
}

// version is a Node version: up to three numbers (n of them written).
type version struct {
	nums [3]int
	n    int
	text string
}

func (v version) String() string {
	return fmt.Sprintf("v%d.%d.%d", v.nums[0], v.nums[1], v.nums[2])
}

func (v version) less(w version) bool {
	for i := range v.nums {
		if v.nums[i] != w.nums[i] {
			return v.nums[i] < w.nums[i]
		}
	}
	return false
}

// matches reports whether v's numbers start with prefix's.
func (v version) matches(prefix version) bool {
	for i := 0; i < prefix.n; i++ {
		if v.nums[i] != prefix.nums[i] {
			return false
		}
	}
	return true
}

// parseNums reads "22", "22.22" or "22.22.3" (an optional leading v).
func parseNums(s string) (version, bool) {
	v := version{text: s}
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || strings.ContainsAny(p, "+-") {
			return v, false
		}
		v.nums[i] = n
	}
	v.n = len(parts)
	return v, true
}

// parseVersion reads an installed version's folder name: vX.Y.Z.
func parseVersion(name string) (version, bool) {
	v, ok := parseNums(name)
	return v, ok && v.n == 3 && strings.HasPrefix(name, "v")
}

// parsePrefix reads a .nvmrc's version prefix.
func parsePrefix(content string) (version, error) {
	line, _, _ := strings.Cut(content, "\n")
	line, _, _ = strings.Cut(line, "#")
	line = strings.TrimSpace(line)
	if line == "" {
		return version{}, errors.New("the file names no version")
	}
	v, ok := parseNums(line)
	if !ok {
		// Quoted only when it looks like what a .nvmrc holds (an alias, a
		// version): a file that holds something else (a .nvmrc symlinked
		// to a credentials file) is never echoed into a plan.
		what := "its content"
		if len(line) <= 20 && strings.Trim(line, "abcdefghijklmnopqrstuvwxyz0123456789.*-") == "" || strings.HasPrefix(line, "lts/") && len(line) <= 20 && !strings.ContainsAny(line, ":@ ") {
			what = strconv.Quote(line)
		}
		return version{}, fmt.Errorf("%s is not a Node version (22, v22, 22.22 or v22.22.3): aliases such as lts/* are not resolved (cadence does not run nvm); write the version", what)
	}
	return v, nil
}
