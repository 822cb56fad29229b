package gitint

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/spec"
)

// worktreeMarker starts the line of a worktree entry that records the
// content of the worktree's gitdir file when the entry was written: an
// entry whose worktree is gone, or whose id git gave to another worktree
// since, is dropped.
const worktreeMarker = "# gitdir file: "

// GuardWorktree puts the lot worktree at dir, on branch (cadence/<wave>/<lot>),
// under the guard of its repository (InstallGuard, which must have run):
// it writes the worktree's entry (<guard>/worktrees/<id>.config: the guard
// config, and the lot's wave, lot and branch, which the hooks read as a
// file) and rewrites lots.config, which includes each entry for its
// worktree's own git dir exactly (includeIf gitdir:<common>/worktrees/<id>).
// From then on every git process working in dir has the guard config,
// whatever its environment. Entries of worktrees that are gone are dropped
// on the way. Files are written aside and renamed into place, under a lock
// of the process, so several lots of a repository can start at once; the
// repository's own config is not written (InstallGuard's include entry
// points at lots.config). Calling it again for the same worktree is
// harmless (a fix or conflict session in a worktree that is already
// guarded).
func GuardWorktree(ctx context.Context, repo, dir, branch string) error {
	gitDir, common, ok := linkedGitDir(dir)
	if !ok {
		return fmt.Errorf("%s is not a linked worktree of %s", dir, repo)
	}
	if real, err := filepath.EvalSymlinks(common); err == nil {
		common = real
	}
	id := filepath.Base(gitDir)
	guard := layout.RepoGuard(common)
	if _, err := os.Stat(filepath.Join(guard, "repo.config")); err != nil {
		return fmt.Errorf("guard the worktree %s: the guard of %s is not installed: %w", dir, repo, err)
	}
	if strings.ContainsAny(dir+branch, "\n\r") {
		return fmt.Errorf("guard the worktree %s: a line break in its path or branch", dir)
	}
	m := guardLock(common)
	m.Lock()
	defer m.Unlock()
	gitdirFile, err := os.ReadFile(filepath.Join(common, "worktrees", id, "gitdir"))
	if err != nil {
		return fmt.Errorf("guard the worktree %s: %w", dir, err)
	}
	wave, lot := "", ""
	if rest, ok := strings.CutPrefix(branch, "cadence/"); ok {
		wave, lot, _ = strings.Cut(rest, "/")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: lot worktree %s (removed when the wave ends; see cadence clean)\n", GuardMarker, dir)
	fmt.Fprintf(&b, "%s%s\n", worktreeMarker, strings.TrimSpace(string(gitdirFile)))
	// What the hooks read, as plain lines (lot_info reads them without
	// starting git); the [cadence] section says the same for git config.
	fmt.Fprintf(&b, "# wave=%s\n# lot=%s\n# branch=%s\n", wave, lot, branch)
	fmt.Fprintf(&b, "[include]\n\tpath = %s\n", cfgQuote(filepath.Join(guard, "repo.config")))
	fmt.Fprintf(&b, "[cadence]\n\twave = %s\n\tlot = %s\n\tbranch = %s\n\tworktree = %s\n",
		cfgQuote(wave), cfgQuote(lot), cfgQuote(branch), cfgQuote(dir))
	if err := writeAtomic(filepath.Join(guard, "worktrees", id+".config"), b.String()); err != nil {
		return fmt.Errorf("guard the worktree %s: %w", dir, err)
	}
	if err := writeLots(guard, common); err != nil {
		return fmt.Errorf("guard the worktree %s: %w", dir, err)
	}
	return nil
}

// unguardWorktree returns what drops the guard entry of the lot worktree at
// dir once it is removed (RemoveWorktree), so that a worktree git later
// gives the same id is not taken for the lot's. Nothing when dir is not a
// linked worktree or its repository has no guard.
func unguardWorktree(dir string) func() {
	_, common, ok := linkedGitDir(dir)
	if !ok {
		return func() {}
	}
	if real, err := filepath.EvalSymlinks(common); err == nil {
		common = real
	}
	guard := layout.RepoGuard(common)
	return func() {
		if _, err := os.Stat(filepath.Join(guard, "worktrees")); err != nil {
			return
		}
		m := guardLock(common)
		m.Lock()
		defer m.Unlock()
		_ = writeLots(guard, common) // the entry's git dir is gone: dropped
	}
}

// writeLots rewrites lots.config from the worktree entries, dropping those
// whose worktree is gone (its git dir gone, or its gitdir file not the
// one recorded: git gave the id to another worktree).
func writeLots(guard, common string) error {
	des, err := os.ReadDir(filepath.Join(guard, "worktrees"))
	if err != nil {
		return err
	}
	var entries []string // ReadDir sorts them
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".config") && !strings.HasPrefix(de.Name(), ".") {
			entries = append(entries, filepath.Join(guard, "worktrees", de.Name()))
		}
	}
	var b strings.Builder
	b.WriteString(lotsHeader(guard))
	for _, e := range entries {
		id := strings.TrimSuffix(filepath.Base(e), ".config")
		wtDir := filepath.Join(common, "worktrees", id)
		now, err := os.ReadFile(filepath.Join(wtDir, "gitdir"))
		if err != nil || recordedGitdir(e) != strings.TrimSpace(string(now)) {
			_ = os.Remove(e)
			continue
		}
		fmt.Fprintf(&b, "[includeIf %s]\n\tpath = %s\n", cfgQuote("gitdir:"+globEscape(wtDir)), cfgQuote(e))
	}
	return writeAtomic(filepath.Join(guard, "lots.config"), b.String())
}

// recordedGitdir reads the gitdir file content a worktree entry recorded.
func recordedGitdir(entry string) string {
	f, err := os.Open(entry)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), worktreeMarker); ok {
			return v
		}
	}
	return ""
}

// writeAtomic writes content to path through a file renamed into place: a
// reader (git, a hook) sees the old file or the new one, never a part.
func writeAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// GuardWorktree implements the executor's view of GuardWorktree.
func (g *Repos) GuardWorktree(ctx context.Context, repo *spec.Repo, dir, branch string) error {
	return GuardWorktree(ctx, repo.Path, dir, branch)
}
