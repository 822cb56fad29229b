package claude

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
)

// While a sandboxed Bash call runs, its placeholders (placeholderNames and
// .claude/'s) are in the worktree as mounts of /dev/null: `git add -A`
// inside the call fails on them ("can only add regular files, symbolic
// links or git directories"). So the session's git ignores them: cadence
// gives its git processes a core.excludesFile (through GIT_CONFIG_COUNT,
// never by editing a configuration) holding the user's own excludes file,
// then the placeholders' paths anchored at a worktree's root
// (excludePatterns). Only the session sees it: cadence's own check after
// the session does not, so a new file the agent wrote at one of these
// paths and left uncommitted still hands the lot back, never lost.

// excludesMax bounds how much of the user's excludes file is carried
// over (bytes); git reads no more of a large one either way usefully.
const excludesMax = 1 << 20

// excludePatterns are the gitignore lines of the placeholders.
func excludePatterns() string {
	var b strings.Builder
	b.WriteString("\n# Claude Code sandbox placeholders (cadence)\n")
	for _, n := range placeholderNames {
		b.WriteString("/" + n + "\n")
	}
	for _, n := range claudePlaceholders {
		b.WriteString("/.claude/" + n + "\n")
	}
	return b.String()
}

// excludesEnv writes the session's excludes file in logPrefix's folder
// (the lot's log folder, outside every folder the sandbox lets a session
// write; sandbox-excludes, rewritten by each session of the lot) and returns the entries that point the session's git at
// it, continuing env's GIT_CONFIG_* entries; nil when the file cannot be
// written (the session then runs without it: `git add -A` may fail in
// it, nothing else changes).
func excludesEnv(ctx context.Context, env []string, dir, logPrefix string) []string {
	user := userExcludes(ctx, env, dir)
	p := filepath.Join(filepath.Dir(logPrefix), "sandbox-excludes")
	if err := state.WriteFileAtomic(p, append(user, excludePatterns()...)); err != nil {
		return nil
	}
	n, _ := strconv.Atoi(envValue(env, "GIT_CONFIG_COUNT"))
	if n < 0 {
		n = 0
	}
	return []string{
		fmt.Sprintf("GIT_CONFIG_KEY_%d=core.excludesFile", n),
		fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, p),
		"GIT_CONFIG_COUNT=" + strconv.Itoa(n+1),
	}
}

// userExcludes is the content (at most excludesMax bytes, ending in a
// newline) of the excludes file git would read in dir with env: its
// core.excludesFile, else $XDG_CONFIG_HOME/git/ignore, else
// $HOME/.config/git/ignore; nil when there is none.
func userExcludes(ctx context.Context, env []string, dir string) []byte {
	path := ""
	if git := lookPath("git", envValue(env, "PATH")); git != "" {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var out bytes.Buffer
		res, err := proc.Run(ctx, proc.Cmd{Path: git, Args: []string{"-c", "core.hooksPath=/dev/null", "config", "--path", "--get", "core.excludesFile"},
			Dir: dir, Env: env, Stdout: &out, Grace: time.Second, Direct: true})
		if err == nil && res.ExitCode == 0 {
			path = strings.TrimSpace(out.String())
		}
	}
	if path == "" {
		if x := envValue(env, "XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			path = filepath.Join(x, "git", "ignore")
		} else if h := envValue(env, "HOME"); filepath.IsAbs(h) {
			path = filepath.Join(h, ".config", "git", "ignore")
		}
	}
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, excludesMax))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return b
}
