package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// keyLen is the number of hex digits of a path's hash in a worktree's
// folder names.
const keyLen = 8

// WithWorktrees returns the same layout with the wave's worktrees folder:
// dir is the wave block's `worktrees` attribute (spec resolves it against
// the wave file's folder), "" for the default <home>/worktrees.
func (w Wave) WithWorktrees(dir string) Wave {
	w.worktrees = dir
	return w
}

// WorktreesDir is the folder that holds the lots' worktrees: the wave's
// `worktrees` attribute when set, else <home>/worktrees (with no home, the
// one [Home] gives a user without a home folder: never the current
// folder, which may be inside a repository).
func (w Wave) WorktreesDir() string {
	if w.worktrees != "" {
		return w.worktrees
	}
	return filepath.Join(Home(w.home, ""), "worktrees")
}

// WaveWorktrees is the folder of the wave's worktrees in the repository
// named repoName whose folder is repoPath (made absolute against the
// current folder): <WorktreesDir>/<repoName>-<h(repoPath)>/<wave>-<h(state
// file)>, absolute (see the package doc for h). Two clones of one
// repository, or two waves of the same name in two folders, get two
// folders.
func (w Wave) WaveWorktrees(repoName, repoPath string) string {
	a := w.Abs()
	return filepath.Join(a.WorktreesDir(), repoName+"-"+key(abs(repoPath)), a.waveKey())
}

// Worktree is where a lot's worktree is made in its own repository (named
// repoName, in the folder repoPath): <WaveWorktrees>/<lot>, absolute. Only
// a lot the state has no worktree of yet gets this path; once made, the
// state's record is the truth (see [AlsoWorktree]).
func (w Wave) Worktree(repoName, repoPath, lot string) string {
	return filepath.Join(w.WaveWorktrees(repoName, repoPath), lot)
}

// AlsoWorktree is a lot's worktree in the neighbour repository named repo
// (an "also" repo), given the lot's own worktree (the one the state
// records): <worktree>@<repo>, beside it.
func AlsoWorktree(worktree, repo string) string { return worktree + "@" + repo }

// OldWorktreeRoot is where cadence made the wave's worktrees before they
// moved out of the repositories: .cadence/worktrees/<wave> beside the wave
// file, absolute. A state written then records paths under it; clean still
// recognises them (HoldsWorktree).
func (w Wave) OldWorktreeRoot() string {
	return filepath.Join(w.Abs().WorkDir(), "worktrees", w.name)
}

// HoldsWorktree reports whether path (absolute) is where this layout puts
// one of the wave's worktrees, in any repository: a folder
// <WorktreesDir>/<anything>/<wave>-<h(state file)>/<name>, or
// <OldWorktreeRoot>/<name>. It says nothing of whether the folder exists.
func (w Wave) HoldsWorktree(path string) bool {
	a := w.Abs()
	parent := filepath.Dir(filepath.Clean(path))
	if parent == a.OldWorktreeRoot() {
		return true
	}
	return filepath.Base(parent) == a.waveKey() &&
		filepath.Dir(filepath.Dir(parent)) == filepath.Clean(a.WorktreesDir())
}

// waveKey is the name of the wave's folder in a repository's worktrees
// folder: <wave>-<StateKey>.
func (w Wave) waveKey() string { return w.name + "-" + w.StateKey() }

// StateKey is the wave's key: h(absolute state file), 8 hex digits (see
// the package doc). It tells apart two waves of one name in two folders:
// it names the folder of the wave's worktrees, and the lot branches of a
// wave whose plain branch names another wave of its name has
// (planner.KeyedNamespace).
func (w Wave) StateKey() string { return key(abs(w.StateFile())) }

// key is the first keyLen hex digits of the SHA-256 of p.
func key(p string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(p)))
	return hex.EncodeToString(sum[:])[:keyLen]
}
