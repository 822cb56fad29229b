package gitint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/spec"
)

// A command lot killed after its commit is replayed from the commit it
// started from: the first attempt's commit is kept under a backup ref, the
// branch and the worktree are back at the start, so `git commit` of the
// replay has something to commit.
func TestResetForReplay(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	dir := startLot(t, g, repo, "a")
	start := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	// Nothing to keep: the same commit, a clean tree.
	if ref, err := g.ResetForReplay(ctx, repo, dir, "w", "a", start); err != nil || ref != "" {
		t.Fatalf("clean start: %q %v", ref, err)
	}
	first := gittest.Commit(t, dir, "a: first attempt", map[string]string{"f": "x\n"})
	os.WriteFile(filepath.Join(dir, "stray"), []byte("half\n"), 0o644)
	ref, err := g.ResetForReplay(ctx, repo, dir, "w", "a", start)
	if err != nil {
		t.Fatal(err)
	}
	if ref != "refs/cadence/backup/w/a/1" {
		t.Errorf("backup ref %q", ref)
	}
	if got := strings.TrimSpace(gittest.Git(t, path, "rev-parse", ref)); got != first {
		t.Errorf("backup at %s, want the first attempt %s", got, first)
	}
	if head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD")); head != start {
		t.Errorf("HEAD %s after the reset, want %s", head, start)
	}
	if _, err := os.Stat(filepath.Join(dir, "stray")); !os.IsNotExist(err) {
		t.Errorf("untracked file of the first attempt left: %v", err)
	}
	// The naive command works again.
	gittest.Commit(t, dir, "a: second attempt", map[string]string{"f": "x\n"})
	// A second replay keeps the second attempt under the next ref; a
	// staged change is kept with it.
	os.WriteFile(filepath.Join(dir, "f"), []byte("y\n"), 0o644)
	gittest.Git(t, dir, "add", "f")
	ref2, err := g.ResetForReplay(ctx, repo, dir, "w", "a", start)
	if err != nil || ref2 != "refs/cadence/backup/w/a/2" {
		t.Fatalf("second backup %q %v", ref2, err)
	}
	if got := strings.TrimSpace(gittest.Git(t, path, "show", ref2+":f")); got != "y" {
		t.Errorf("staged change not kept: %q", got)
	}
	refs, _ := tgit().BackupRefs(ctx, path, "w", "")
	if strings.Join(refs, " ") != "refs/cadence/backup/w/a/1 refs/cadence/backup/w/a/2" {
		t.Errorf("BackupRefs = %v", refs)
	}
}

// -replace: the old branch is kept under a backup ref, the worktree and the
// branch go, and the next Worktree starts afresh from the current base.
func TestSetAside(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	dir := startLot(t, g, repo, "a", map[string]string{"f": "old\n"})
	old := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	base := gittest.Commit(t, path, "base moves", map[string]string{"g": "g\n"})
	ref, err := g.SetAside(ctx, repo, dir, "cadence/w/a", "w", "a")
	if err != nil {
		t.Fatal(err)
	}
	if ref != "refs/cadence/backup/w/a/1" || strings.TrimSpace(gittest.Git(t, path, "rev-parse", ref)) != old {
		t.Errorf("backup %q", ref)
	}
	if _, err := gittest.Try(path, "rev-parse", "--verify", "refs/heads/cadence/w/a"); err == nil {
		t.Error("old branch still there")
	}
	got, err := g.Worktree(ctx, repo, dir, "cadence/w/a", true)
	if err != nil || got != base {
		t.Fatalf("fresh worktree from %q (%v), want the current base %s", got, err, base)
	}
	// No branch, no worktree: nothing to keep.
	if ref, err := g.SetAside(ctx, repo, filepath.Join(t.TempDir(), "none"), "cadence/w/zz", "w", "zz"); err != nil || ref != "" {
		t.Errorf("nothing to set aside: %q %v", ref, err)
	}
}
