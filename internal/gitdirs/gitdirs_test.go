package gitdirs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/gitdirs"
)

func TestRead(t *testing.T) {
	root := gitdirs.Real(t.TempDir())
	repo := filepath.Join(root, "app")
	gittest.Git(t, root, "init", "-q", "-b", "main", repo)
	gittest.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	wt := filepath.Join(root, "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "b", wt)

	for _, c := range []struct{ wt, own, common string }{
		{repo, filepath.Join(repo, ".git"), filepath.Join(repo, ".git")},
		{wt, filepath.Join(repo, ".git", "worktrees", "wt"), filepath.Join(repo, ".git")},
	} {
		own, common, err := gitdirs.Read(c.wt)
		if err != nil || own != c.own || common != c.common {
			t.Errorf("Read(%s) = %q, %q, %v; want %q, %q", c.wt, own, common, err, c.own, c.common)
		}
	}

	bad := filepath.Join(root, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, ".git"), []byte("not a git file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.MkdirAll(link, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, ".git"), filepath.Join(link, ".git")); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{bad, link, filepath.Join(root, "none")} {
		if own, common, err := gitdirs.Read(w); err == nil {
			t.Errorf("Read(%s) = %q, %q; want an error", w, own, common)
		}
	}
}
