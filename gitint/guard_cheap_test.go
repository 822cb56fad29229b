package gitint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/layout"
)

// The lot hooks folder of the guard holds cadence's two hooks and a shim
// only for each hook the repository runs itself (git runs no program for a
// hook that is absent), and cadence's hooks start no program but the shell:
// with a PATH that holds git alone, a lot's commit goes through and an
// update of the base is still refused. The repository's own pre-commit
// still runs for a lot's commit.
func TestGuardHooksCheap(t *testing.T) {
	ctx := context.Background()
	repo, _ := withRemote(t)
	marks := t.TempDir()
	own := filepath.Join(repo, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(own, []byte("#!/bin/sh\n: > "+shQuote(filepath.Join(marks, "pre-commit"))+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	des, err := os.ReadDir(filepath.Join(layout.RepoGuard(filepath.Join(repo, ".git")), "hooks"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if want := []string{"pre-commit", "pre-push", "reference-transaction"}; !slices.Equal(names, want) {
		t.Errorf("the guard's lot hooks are %v, want %v", names, want)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if _, err := trepos().Worktree(ctx, repoSpec(repo), wt, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	if err := GuardWorktree(ctx, repo, wt, "cadence/w/a"); err != nil {
		t.Fatal(err)
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(gitBin, filepath.Join(bin, "git")); err != nil {
		t.Fatal(err)
	}
	env := append(gittest.Env(), "PATH="+bin)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(gitBin, args...)
		cmd.Dir, cmd.Env = wt, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if err := os.WriteFile(filepath.Join(wt, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run("add", "b.txt"); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	if out, err := run("commit", "-qm", "b"); err != nil {
		t.Fatalf("a lot's commit with git alone on PATH: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(marks, "pre-commit")); err != nil {
		t.Error("the repository's own pre-commit did not run for the lot's commit")
	}
	if out, err := run("update-ref", "refs/heads/main", "HEAD"); err == nil || !strings.Contains(out, "cadence") {
		t.Errorf("an update of the base with git alone on PATH: %v\n%s", err, out)
	}
}
