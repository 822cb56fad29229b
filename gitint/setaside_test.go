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

// -replace of a lot whose branch holds no commit beyond its base (handed
// back at setup, or before its first commit) keeps no backup ref: there is
// nothing of an earlier attempt to keep. Uncommitted changes to tracked
// files are still kept, and so is a branch with a commit of its own.
func TestSetAsideNothingBeyondBase(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()

	// On its branch at the base, a clean tree: nothing kept, both gone.
	dir := startLot(t, g, repo, "a")
	gittest.Commit(t, path, "base moves", map[string]string{"g": "g\n"})
	ref, err := g.SetAside(ctx, repo, dir, "cadence/w/a", "w", "a")
	if err != nil || ref != "" {
		t.Fatalf("a branch with nothing beyond the base: backup %q (%v), want none", ref, err)
	}
	if _, err := gittest.Try(path, "rev-parse", "--verify", "refs/heads/cadence/w/a"); err == nil {
		t.Error("branch still there")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("worktree still there: %v", err)
	}
	if refs, _ := tgit().BackupRefs(ctx, path, "w", ""); len(refs) != 0 {
		t.Errorf("backup refs %v, want none", refs)
	}

	// The branch alone (its worktree gone), at an older base commit.
	dir = startLot(t, g, repo, "b")
	gittest.Git(t, path, "worktree", "remove", "--force", "--force", dir)
	gittest.Commit(t, path, "base moves again", map[string]string{"h": "h\n"})
	if ref, err := g.SetAside(ctx, repo, dir, "cadence/w/b", "w", "b"); err != nil || ref != "" {
		t.Errorf("a bare branch with nothing beyond the base: backup %q (%v), want none", ref, err)
	}

	// Uncommitted changes to a tracked file are kept.
	dir = startLot(t, g, repo, "c")
	if err := os.WriteFile(filepath.Join(dir, "g"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err = g.SetAside(ctx, repo, dir, "cadence/w/c", "w", "c")
	if err != nil || ref != "refs/cadence/backup/w/c/1" {
		t.Fatalf("uncommitted changes: backup %q (%v)", ref, err)
	}
	if got := strings.TrimSpace(gittest.Git(t, path, "show", ref+":g")); got != "changed" {
		t.Errorf("the change is not kept: %q", got)
	}

	// A commit of its own is kept.
	dir = startLot(t, g, repo, "d", map[string]string{"f": "d\n"})
	own := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	gittest.Git(t, path, "worktree", "remove", "--force", "--force", dir)
	ref, err = g.SetAside(ctx, repo, dir, "cadence/w/d", "w", "d")
	if err != nil || ref != "refs/cadence/backup/w/d/1" || strings.TrimSpace(gittest.Git(t, path, "rev-parse", ref)) != own {
		t.Errorf("own commit: backup %q (%v)", ref, err)
	}
}
