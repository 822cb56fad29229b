package claude

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
)

// TestTidyKilled: after a kill -9, Tidy removes the sandbox's placeholders
// from a lot's worktree and its git dirs, and only them: a file with
// content, a tracked empty file, an empty file at another name, a lock a
// live process holds open and one made after the tidying began stay.
func TestTidyKilled(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	repo := gitRepo(t, dir, "wt")
	w := filepath.Join(dir, "wt")
	common := filepath.Join(repo, ".git")
	sandboxMess(t, w)
	os.MkdirAll(filepath.Join(repo, ".claude", ".cc-writes"), 0o755)
	for _, f := range []string{"config.lock", "config.worktree", "objects/info/alternates"} {
		os.WriteFile(filepath.Join(common, f), nil, 0o644)
	}
	os.WriteFile(filepath.Join(common, "worktrees", "wt", "config.worktree"), nil, 0o644)
	// What is not the sandbox's.
	os.WriteFile(filepath.Join(w, ".profile"), []byte("mine\n"), 0o644)
	os.WriteFile(filepath.Join(w, ".gitmodules"), nil, 0o644)
	os.WriteFile(filepath.Join(w, "empty.txt"), nil, 0o644)
	git := exec.Command("git", "add", ".gitmodules")
	git.Dir = w
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	before := time.Now().Add(time.Second)
	// A lock a live process holds open (git, while it writes the config).
	held := filepath.Join(common, "worktrees", "wt", "config.lock")
	os.WriteFile(held, nil, 0o644)
	holder := exec.Command("sleep", "30")
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	holder.ExtraFiles = []*os.File{f}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()

	a := New()
	env := []string{"PATH=" + os.Getenv("PATH")}
	// Made at or after the tidying began: left alone.
	if got := a.Tidy(agent.Tidy{Worktrees: []string{w}, Repos: []string{repo}, Before: time.Now().Add(-time.Hour), Env: env}); len(got) != 0 {
		t.Errorf("Tidy removed what was made after it began: %v", got)
	}
	dry := a.Tidy(agent.Tidy{Worktrees: []string{w}, Repos: []string{repo}, Before: before, Env: env, DryRun: true})
	if !exists(common, "config.lock") || !exists(w, ".bashrc") {
		t.Error("a dry run removed something")
	}
	got := a.Tidy(agent.Tidy{Worktrees: []string{w}, Repos: []string{repo}, Before: before, Env: env})
	if len(dry) != len(got) {
		t.Errorf("dry run listed %d, the run removed %d", len(dry), len(got))
	}
	for _, gone := range []string{"wt/.claude", "wt/.vscode", "wt/.bashrc", "wt/.mcp.json", "repo/.claude/.cc-writes",
		"repo/.git/config.lock", "repo/.git/config.worktree", "repo/.git/objects/info/alternates", "repo/.git/worktrees/wt/config.worktree"} {
		if exists(dir, gone) {
			t.Errorf("%s is left", gone)
		}
	}
	for _, kept := range []string{"wt/.profile", "wt/.gitmodules", "wt/empty.txt", "repo/.git/worktrees/wt/config.lock", "repo/.git/config"} {
		if !exists(dir, kept) {
			t.Errorf("%s was removed", kept)
		}
	}
}
