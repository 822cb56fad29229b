package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// legacyLockReason is the lock reason of the worktrees cadence made before
// the reason named the wave and the lot.
const legacyLockReason = "cadence lot"

// LockReason is the reason cadence locks the worktree of the lot branch
// branch with (`git worktree lock --reason`; git keeps a locked worktree's
// record when its folder is gone): "cadence: lot <lot> of wave <wave>" for
// a branch cadence/<wave>/<lot>, else "cadence: branch <branch>". It is
// how cadence recognises its own worktrees in `git worktree list`.
func LockReason(branch string) string {
	if rest, ok := strings.CutPrefix(branch, "cadence/"); ok {
		if wave, lot, ok := strings.Cut(rest, "/"); ok && wave != "" && lot != "" {
			return "cadence: lot " + lot + " of wave " + wave
		}
	}
	return "cadence: branch " + branch
}

// ownLock reports whether a worktree on branch (refs/heads/ stripped) with
// lock reason reason is one cadence made for that branch's lot: the reason
// is LockReason(branch), or the reason of cadence's earlier versions.
func ownLock(reason, branch string) bool {
	return reason == LockReason(branch) || reason == legacyLockReason
}

// worktreeEntry is one worktree of `git worktree list --porcelain`.
type worktreeEntry struct {
	// Path is the worktree's folder, as git recorded it.
	Path string
	// Branch is the checked-out branch without refs/heads/ ("" when
	// detached or bare).
	Branch string
	// Locked says the worktree is locked, Reason why ("" when no reason
	// was given).
	Locked bool
	Reason string
	// Prunable says git would prune the record (its folder is gone and it
	// is not locked).
	Prunable bool
}

// gone reports whether the worktree's folder is not there any more.
func (e worktreeEntry) gone() bool {
	_, err := os.Stat(e.Path)
	return errors.Is(err, os.ErrNotExist)
}

// worktreeList lists the worktrees of the repository at repoPath (the main
// one first), from `git worktree list --porcelain -z` run in repoPath.
func (g Git) worktreeList(ctx context.Context, repoPath string) ([]worktreeEntry, error) {
	out, err := g.Run(ctx, repoPath, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, fmt.Errorf("list the worktrees of %s: %w", repoPath, err)
	}
	return parseWorktreeList(out), nil
}

// parseWorktreeList parses `git worktree list --porcelain -z`: records of
// NUL-terminated "key[ value]" fields, each record ended by an empty field
// (git-worktree(1) "Porcelain Format").
func parseWorktreeList(out string) []worktreeEntry {
	var list []worktreeEntry
	var cur *worktreeEntry
	for _, f := range strings.Split(out, "\x00") {
		key, val, _ := strings.Cut(f, " ")
		switch key {
		case "worktree":
			list = append(list, worktreeEntry{Path: val})
			cur = &list[len(list)-1]
		case "branch":
			if cur != nil {
				cur.Branch = strings.TrimPrefix(val, "refs/heads/")
			}
		case "locked":
			if cur != nil {
				cur.Locked, cur.Reason = true, val
			}
		case "prunable":
			if cur != nil {
				cur.Prunable = true
			}
		case "":
			cur = nil
		}
	}
	return list
}

// samePath reports whether two paths name the same folder: equal once
// cleaned, or once their symbolic links are resolved (git may record a
// worktree's real path).
func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	return realPath(a) == realPath(b)
}

// realPath is p with its symbolic links resolved, as far as its folders
// exist (a worktree's folder may be gone while its parent is there).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if d := filepath.Dir(p); d != p {
		return filepath.Join(realPath(d), filepath.Base(p))
	}
	return p
}

// dropGone drops git's record of the lot's worktrees whose folder is gone
// (the lead deleted it, or the whole folder of worktrees): a locked record
// is never pruned by git, and `git worktree add` then refuses the path
// ("missing but locked worktree") or the branch ("already checked out").
// The records concerned are the one at dir and, when branch is not "",
// those on branch. Each is dropped with `git worktree remove --force
// --force` run in the repository (of a missing folder it removes only
// git's record): the branch and its commits stay. A record is dropped only
// when cadence made it (its lock reason names cadence and the lot, see
// LockReason) or when it is not locked; a record locked by anything else
// is left, and the error says how to release it.
func (g Git) dropGone(ctx context.Context, repoPath, dir, branch string) error {
	list, err := g.worktreeList(ctx, repoPath)
	if err != nil {
		return err
	}
	for _, e := range list {
		if !samePath(e.Path, dir) && (branch == "" || e.Branch != branch) {
			continue
		}
		if !e.gone() {
			continue
		}
		if e.Locked && !ownLock(e.Reason, e.Branch) && !(e.Branch == "" && ownLock(e.Reason, branch)) {
			return fmt.Errorf("the worktree %s (branch %s) is gone, but git keeps its record, locked by something other than cadence (%q): release it with git worktree unlock %s && git worktree prune, in %s",
				e.Path, e.Branch, e.Reason, e.Path, repoPath)
		}
		if _, err := g.Run(ctx, repoPath, "worktree", "remove", "--force", "--force", e.Path); err != nil {
			return fmt.Errorf("drop git's record of the worktree %s, whose folder is gone: %w", e.Path, err)
		}
	}
	return nil
}

// RemoveWorktree removes a lot's worktree; the branch is kept. A worktree
// with uncommitted changes is not removed (git refuses, and cadence never
// forces it): it stays, locked as before. A worktree whose folder is gone
// has only git's record of it dropped (dropGone); one git does not know is
// nothing to remove.
func (g *Repos) RemoveWorktree(ctx context.Context, repo *spec.Repo, dir string) error {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	g.takePristine(dir, "")
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return g.dropGone(ctx, repo.Path, dir, "")
	}
	forget := unguardWorktree(dir)
	reason, locked, ok := lockOf(dir)
	if locked == "" {
		reason = legacyLockReason // as git's list said of an unlocked one
	}
	switch {
	case ok && locked != "":
		// What `git worktree unlock` does (builtin/worktree.c): remove
		// the worktree's locked file.
		if err := os.Remove(locked); err != nil && !os.IsNotExist(err) {
			_, _ = g.Run(ctx, repo.Path, "worktree", "unlock", dir)
		}
	case !ok:
		reason = legacyLockReason
		if list, err := g.worktreeList(ctx, repo.Path); err == nil {
			for _, e := range list {
				if samePath(e.Path, dir) && e.Locked {
					reason = e.Reason
				}
			}
		}
		_, _ = g.Run(ctx, repo.Path, "worktree", "unlock", dir)
	}
	_, err := g.Run(ctx, repo.Path, "worktree", "remove", dir)
	if err != nil && strings.Contains(err.Error(), "containing submodules") {
		// git removes a worktree with submodules only by force: cadence
		// forces it once it checked that nothing would be lost.
		if err = g.submodulesKept(ctx, repo, dir); err == nil {
			_, err = g.Run(ctx, repo.Path, "worktree", "remove", "--force", dir)
		}
	}
	if err != nil {
		_, _ = g.Run(ctx, repo.Path, "worktree", "lock", "--reason", reason, dir)
		return fmt.Errorf("remove the worktree %s: %w", dir, err)
	}
	forget()
	return nil
}

// lockOf reads the lock of the linked worktree at dir from git's files
// (gitrepository-layout(5): worktrees/<id>/locked holds the reason): the
// reason and the locked file's path ("" when it is not locked). ok is false
// when the files do not clearly belong to dir (its .git file and the
// worktree's gitdir file must name each other): then ask git.
func lockOf(dir string) (reason, locked string, ok bool) {
	gitDir, _, linked := linkedGitDir(dir)
	if !linked {
		return "", "", false
	}
	b, err := readRegular(filepath.Join(gitDir, "gitdir"))
	if err != nil || !samePath(strings.TrimSpace(string(b)), filepath.Join(dir, ".git")) {
		return "", "", false
	}
	p := filepath.Join(gitDir, "locked")
	r, err := readRegular(p)
	switch {
	case os.IsNotExist(err):
		return "", "", true
	case err != nil:
		return "", "", false
	}
	return strings.TrimRight(string(r), "\n"), p, true
}
