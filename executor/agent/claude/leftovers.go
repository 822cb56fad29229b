package claude

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/gitdirs"
	"github.com/cadence-run/cadence/internal/proc"
)

// What Claude Code's sandbox leaves in a folder (2.1.328, measured): while
// a Bash call runs, bubblewrap needs a mount point for every path it
// protects that does not exist, so empty placeholders show up in the
// working folder and the --add-dir folders (placeholderNames, and under
// .claude/ claudePlaceholders), and a .claude/.cc-writes folder in them
// and in the repository's main worktree. The CLI removes the placeholders
// after each call (and on SIGTERM), but leaves .claude/.cc-writes, and a
// SIGKILL leaves everything. In the git dirs it protects it leaves, for
// good, empty files and folders (gitDirPlaceholders).
//
// While a call runs, the placeholders are untracked files to git: the
// executor's check whether a timed-out write step still moves
// (agent.Session.Moved) compares the worktree with its previous look, so
// a call that hangs across the timeout is taken for movement once (its
// placeholders are new then, the same at the next look): one extension of
// a third of the timeout, within agent.MaxExtensions. A session that runs
// call after call is working, and bounded the same way. The checks after
// the session (hand-back, a review's edits) come after the cleanup.
var (
	placeholderNames   = []string{".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".gitconfig", ".gitmodules", ".mcp.json", ".ripgreprc", ".vscode", ".idea"}
	claudePlaceholders = []string{".cc-writes", "settings.json", "settings.local.json", "skills", "hooks", "launch.json", "workflows", "routines", "output-styles", "scheduled_tasks.json", "loop.md", "commands", "agents"}
	gitDirPlaceholders = []string{"config.worktree", "config.lock", "glab-cli", "remotes", "info/.claude-sandbox-noreplace",
		"objects/info/alternates", "objects/info/.claude-sandbox-noreplace", "objects/info/commit-graphs/.claude-sandbox-noreplace", "objects/info/commit-graphs"}
)

// leftovers removes what the sandbox left in the folders sessions ran in,
// once the last session using a folder has ended: every placeholder that
// did not exist when the first of them began and is still empty (a file of
// no bytes that git does not track, or an empty folder), and .claude/
// itself when it did not exist before and is empty then. What an agent
// wrote is never removed. Sessions of one repository share its main
// worktree, hence the count.
type leftovers struct {
	mu    sync.Mutex
	roots map[string]*rootUse
}

// busy reports whether a running session of this process uses the folder
// path (Tidy leaves it alone).
func (l *leftovers) busy(path string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.roots[path] != nil
}

// root is a folder a sandboxed session may leave things in: a worktree
// (the lot's, or a repository's main worktree) or a git dir; common marks
// a repository's common git dir, which every session of the repository
// shares.
type root struct {
	path   string
	gitDir bool
	common bool
}

// rootUse is a folder in use by running sessions.
type rootUse struct {
	n      int
	gitDir bool
	// absent are the candidates (relative paths) that did not exist when
	// the first session began; claude is whether .claude/ was among them.
	absent map[string]bool
	claude bool
	// graphs are the repository's commit-graph files when the first
	// session began (common git dirs only: graphs.go).
	graphs map[string]graphFile
}

// begin records the folders of a session that is about to start and
// returns what to call when it has ended; pathList finds git for the
// tracked-file check.
func (l *leftovers) begin(roots []root, pathList string, note func(string)) (end func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.roots == nil {
		l.roots = map[string]*rootUse{}
	}
	for _, r := range roots {
		u := l.roots[r.path]
		if u == nil {
			u = &rootUse{gitDir: r.gitDir, absent: map[string]bool{}}
			if r.common {
				precreate(r.path, u.absent)
				u.graphs = readGraphs(r.path)
			}
			for _, c := range candidates(r.gitDir) {
				if _, err := os.Lstat(filepath.Join(r.path, c)); err != nil {
					u.absent[c] = true
				}
			}
			u.claude = u.absent[".claude"]
			l.roots[r.path] = u
		}
		u.n++
	}
	return func() {
		l.mu.Lock()
		var done []string
		uses := map[string]*rootUse{}
		for _, r := range roots {
			u := l.roots[r.path]
			if u.n--; u.n == 0 {
				delete(l.roots, r.path)
				done = append(done, r.path)
				uses[r.path] = u
			}
		}
		l.mu.Unlock()
		for _, r := range done {
			if uses[r].graphs != nil {
				for _, n := range setGraphsAside(r, uses[r].graphs) {
					if note != nil {
						note(n)
					}
				}
			}
			if uses[r].gitDir {
				cleanGitDir(r, uses[r])
			} else {
				cleanRoot(r, uses[r], pathList)
			}
		}
	}
}

// precreate makes, in a repository's common git dir, the placeholders the
// sandbox would make there (gitDirPlaceholders: empty files, and
// commit-graphs as a folder) where they are absent and their folder
// exists, and marks each one it made in absent, so that the last session
// of the repository removes them (cleanGitDir). The CLI makes a
// placeholder for each protected path that is absent when a Bash call
// starts, binds each existing one read-only, and removes its own after
// the call; left to the CLIs, two sessions of one repository race there,
// one removing the placeholder the other has just found and is binding
// ("bwrap: Can't find source path …/config.lock", the call failing with
// exit code 1). Made once before the first session, they exist until the
// last one ends, and no CLI takes them for its own. While they exist the
// repository's `git config` writes fail ("could not lock config file"),
// as they do during every sandboxed Bash call.
func precreate(common string, absent map[string]bool) {
	dirsFirst := append([]string{}, gitDirPlaceholders...)
	sort.SliceStable(dirsFirst, func(i, j int) bool {
		return strings.HasSuffix(dirsFirst[i], "commit-graphs") && !strings.HasSuffix(dirsFirst[j], "commit-graphs")
	})
	for _, c := range dirsFirst {
		p := filepath.Join(common, c)
		if _, err := os.Stat(filepath.Dir(p)); err != nil {
			continue
		}
		if strings.HasSuffix(c, "commit-graphs") {
			if os.Mkdir(p, 0o755) == nil {
				absent[c] = true
			}
			continue
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			absent[c] = true
		}
	}
}

// candidates are the relative paths the sandbox may leave in a worktree,
// or in a git dir.
func candidates(gitDir bool) []string {
	if gitDir {
		return gitDirPlaceholders
	}
	out := append([]string{".claude"}, placeholderNames...)
	for _, c := range claudePlaceholders {
		out = append(out, filepath.Join(".claude", c))
	}
	return out
}

// cleanGitDir removes the placeholders the sandbox left in a git dir:
// those absent before and empty now (git tracks nothing there).
func cleanGitDir(dir string, u *rootUse) {
	var dirs []string
	for _, c := range gitDirPlaceholders {
		if !u.absent[c] {
			continue
		}
		p := filepath.Join(dir, c)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode().IsRegular() && fi.Size() == 0:
			_ = os.Remove(p)
		case fi.IsDir():
			dirs = append(dirs, c)
		}
	}
	removeDirs(dir, dirs)
}

// removeDirs removes the empty ones of dirs (relative to root), deepest
// first, so that a folder emptied by the removals goes too; os.Remove
// leaves a folder that is not empty.
func removeDirs(root string, dirs []string) {
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, d := range dirs {
		_ = os.Remove(filepath.Join(root, d))
	}
}

// cleanRoot removes a worktree's leftovers (see leftovers).
func cleanRoot(root string, u *rootUse, pathList string) {
	var files, dirs []string
	consider := func(rel string) {
		fi, err := os.Lstat(filepath.Join(root, rel))
		switch {
		case err != nil:
		case fi.Mode().IsRegular() && fi.Size() == 0:
			files = append(files, rel)
		case fi.IsDir():
			dirs = append(dirs, rel)
		}
	}
	for _, c := range placeholderNames {
		if u.absent[c] {
			consider(c)
		}
	}
	if u.claude {
		// .claude/ is the sandbox's: every empty thing in it goes.
		_ = filepath.WalkDir(filepath.Join(root, ".claude"), func(p string, d os.DirEntry, err error) error {
			if err == nil {
				rel, _ := filepath.Rel(root, p)
				consider(rel)
			}
			return nil
		})
	} else {
		for _, c := range claudePlaceholders {
			if rel := filepath.Join(".claude", c); u.absent[rel] {
				consider(rel)
			}
		}
	}
	for _, f := range untracked(root, files, pathList) {
		_ = os.Remove(filepath.Join(root, f))
	}
	removeDirs(root, dirs)
}

// untracked returns the files (relative to root) that git does not track
// in root; when git cannot tell, none (nothing is removed on a doubt).
func untracked(root string, files []string, pathList string) []string {
	if len(files) == 0 {
		return nil
	}
	git := lookPath("git", pathList)
	if git == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	args := append([]string{"-c", "core.hooksPath=/dev/null", "ls-files", "-z", "--"}, files...)
	res, err := proc.Run(ctx, proc.Cmd{Path: git, Args: args, Dir: root, Env: []string{"PATH=" + pathList},
		Stdout: &out, Grace: time.Second, Direct: true})
	if err != nil || res.ExitCode != 0 {
		return nil
	}
	tracked := map[string]bool{}
	for _, f := range strings.Split(out.String(), "\x00") {
		tracked[filepath.FromSlash(f)] = true
	}
	var keep []string
	for _, f := range files {
		if !tracked[f] {
			keep = append(keep, f)
		}
	}
	return keep
}

// sandboxRoots are the folders a sandboxed session may leave things in:
// its worktrees, their git dirs and their repositories' main worktrees.
func sandboxRoots(ws []string) []root {
	var out []root
	seen := map[string]bool{}
	add := func(p string, gitDir bool) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, root{path: p, gitDir: gitDir})
		}
	}
	for _, w := range ws {
		add(w, false)
		if own, common, err := gitdirs.Read(w); err == nil {
			add(mainWorktree(common), false)
			if !seen[common] {
				seen[common] = true
				out = append(out, root{path: common, gitDir: true, common: true})
			}
			add(own, true)
		}
	}
	return out
}
