package claude

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/gitdirs"
	"github.com/cadence-run/cadence/internal/proc"
)

var _ agent.Tidier = (*Adapter)(nil)

// Tidy implements agent.Tidier: it removes what the sandbox leaves when a
// session is killed with its cadence (see the list above leftovers),
// found only at the sandbox's exact paths:
//
//   - in a lot's worktree (t.Worktrees): the placeholders (placeholderNames
//     at its top, claudePlaceholders under .claude/) that are files of no
//     bytes git does not track, or empty folders; then .claude/ when that
//     leaves it empty;
//   - in the git dirs of those worktrees and of t.Repos (the worktree's
//     own and the repository's common one): gitDirPlaceholders that are
//     files of no bytes or empty folders (an empty config.lock is the
//     sandbox's: git writes a lock it holds, and holds it open);
//   - in a repository's main worktree: .claude/.cc-writes when empty.
//
// Anything made at or after t.Before, open in a live process or mounted
// over by one (a running sandbox of another wave), and the folders of this
// process's running sessions, stay. Without /proc to tell, nothing in a
// git dir or a main worktree is removed.
func (a *Adapter) Tidy(t agent.Tidy) []string {
	pathList := envValue(t.Env, "PATH")
	var files, dirs []string // candidates: absolute paths
	gitDirsSeen := map[string]bool{}
	addGitDir := func(g string) {
		if g == "" || gitDirsSeen[g] || a.left.busy(g) {
			return
		}
		gitDirsSeen[g] = true
		for _, c := range gitDirPlaceholders {
			sortOut(filepath.Join(g, c), t.Before, &files, &dirs)
		}
	}
	var worktreeFiles []string
	for _, w := range t.Worktrees {
		if a.left.busy(w) {
			continue
		}
		var wf []string
		for _, c := range worktreeCandidates() {
			sortOut(filepath.Join(w, c), t.Before, &wf, &dirs)
		}
		worktreeFiles = append(worktreeFiles, untrackedIn(w, wf, pathList)...)
		if own, common, err := gitdirs.Read(w); err == nil {
			addGitDir(own)
			addGitDir(common)
		}
	}
	for _, r := range t.Repos {
		own, common, err := gitdirs.Read(r)
		if err != nil {
			continue
		}
		addGitDir(own)
		addGitDir(common)
		if m := mainWorktree(common); m != "" && !a.left.busy(m) {
			sortOut(filepath.Join(m, ".claude", ".cc-writes"), t.Before, &files, &dirs)
		}
	}
	files = append(files, worktreeFiles...)
	held, ok := proc.InUse(append(append([]string{}, files...), dirs...))
	var removed []string
	for _, f := range files {
		if ok && !held[f] && (t.DryRun || os.Remove(f) == nil) {
			removed = append(removed, f)
		}
	}
	// Deepest first, so that a folder emptied by the removals goes too;
	// os.Remove leaves a folder that is not empty.
	sort.SliceStable(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, d := range dirs {
		if ok && !held[d] && (t.DryRun || os.Remove(d) == nil) {
			removed = append(removed, d)
		}
	}
	if !t.DryRun {
		for _, w := range t.Worktrees {
			if !a.left.busy(w) {
				_ = os.Remove(filepath.Join(w, ".claude")) // only when empty
			}
		}
	}
	return removed
}

// worktreeCandidates are the placeholders' paths in a worktree (relative):
// placeholderNames, and claudePlaceholders under .claude/.
func worktreeCandidates() []string {
	out := append([]string{}, placeholderNames...)
	for _, c := range claudePlaceholders {
		out = append(out, filepath.Join(".claude", c))
	}
	return out
}

// sortOut adds p to files when it is a file of no bytes, to dirs when it
// is an empty folder, either made before before; anything else (a
// symbolic link, content, a later time) is left out.
func sortOut(p string, before time.Time, files, dirs *[]string) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.ModTime().Before(before) {
		return
	}
	switch {
	case fi.Mode().IsRegular() && fi.Size() == 0:
		*files = append(*files, p)
	case fi.IsDir():
		if ents, err := os.ReadDir(p); err == nil && len(ents) == 0 {
			*dirs = append(*dirs, p)
		}
	}
}

// untrackedIn returns the files (absolute, in worktree w) git does not
// track there; none when git cannot tell.
func untrackedIn(w string, files []string, pathList string) []string {
	rel := make([]string, 0, len(files))
	for _, f := range files {
		r, err := filepath.Rel(w, f)
		if err != nil {
			return nil
		}
		rel = append(rel, r)
	}
	var out []string
	for _, r := range untracked(w, rel, pathList) {
		out = append(out, filepath.Join(w, r))
	}
	return out
}
