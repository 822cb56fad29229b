package gitint

import (
	"os"
	"path/filepath"
	"strings"
)

// HeadLogTip reads, from the files of the linked worktree at dir (no git
// process), where the newest entry of its HEAD reflog (<git dir>/logs/HEAD,
// lines "<old> <new> <who> <when>\t<message>") left HEAD: <new>. Every git
// command that moves the checked-out branch from inside the worktree
// (commit, reset, rebase, merge, update-ref of the branch HEAD points at)
// adds such an entry; a move made from elsewhere (another worktree, a
// direct write of the ref file) does not. "" when dir is not a linked
// worktree or has no HEAD reflog (core.logAllRefUpdates off).
func HeadLogTip(dir string) string {
	gitDir, _, ok := linkedGitDir(dir)
	if !ok {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "logs", "HEAD"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// HeadLogTip implements the executor's view (HeadLogTip).
func (g *Repos) HeadLogTip(dir string) string { return HeadLogTip(dir) }
