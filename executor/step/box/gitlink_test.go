package box_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/gitint/gittest"
)

// gitLinkSetup makes a repository (main with two commits, packed) and the
// lot worktree of cadence/w/a, and returns bwrap, the repository and the
// worktree.
func gitLinkSetup(t *testing.T) (bwrap, repo, wt string) {
	t.Helper()
	bwrap, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH"))
	if missing != "" {
		t.Skipf("no step sandbox here: %s", missing)
	}
	root := t.TempDir()
	repo = filepath.Join(root, "app")
	gittest.Git(t, root, "init", "-q", "-b", "main", repo)
	if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, repo, "add", "f.txt")
	gittest.Git(t, repo, "commit", "-q", "-m", "base")
	gittest.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "second")
	gittest.Git(t, repo, "gc", "-q")
	wt = filepath.Join(root, "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "cadence/w/a", wt)
	return bwrap, repo, wt
}

// gitLinkRun runs script in the box of lot a's worktree and returns its
// output and error.
func gitLinkRun(t *testing.T, bwrap, wt, script string) (string, error) {
	t.Helper()
	args, err := box.Args(box.Spec{Worktrees: []string{wt}, Branch: "cadence/w/a", Dir: wt},
		[]string{"/bin/sh", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, args...)
	cmd.Env = gittest.Env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestGitLinkReadOnly: the worktree's .git file and its git dir's
// commondir and gitdir files are read-only in the box (as the agent
// sandbox denies them: executor/agent/claude/settings.go). A step that
// pointed .git at the repository's own git dir would have every git
// process cadence runs in the lot's worktree, outside the box, work on
// your checkout's repository and branch (HEAD main, a reset there moving
// main).
func TestGitLinkReadOnly(t *testing.T) {
	bwrap, repo, wt := gitLinkSetup(t)
	common := filepath.Join(repo, ".git")
	own := filepath.Join(common, "worktrees", "wt")
	for _, attack := range []struct{ name, script string }{
		{"dotgit", "echo 'gitdir: " + common + "' > .git"},
		{"commondir", "echo /nowhere > " + filepath.Join(own, "commondir")},
		{"gitdir", "echo /nowhere/.git > " + filepath.Join(own, "gitdir")},
	} {
		t.Run(attack.name, func(t *testing.T) {
			before := map[string][]byte{}
			for _, p := range []string{filepath.Join(wt, ".git"), filepath.Join(own, "commondir"), filepath.Join(own, "gitdir")} {
				b, _ := os.ReadFile(p)
				before[p] = b
			}
			out, _ := gitLinkRun(t, bwrap, wt, attack.script)
			if got, err := exec.Command("git", "-C", wt, "rev-parse", "--abbrev-ref", "HEAD").Output(); err != nil || strings.TrimSpace(string(got)) != "cadence/w/a" {
				t.Errorf("after the step, git in the lot's worktree, outside the box, is on %q (%v)", strings.TrimSpace(string(got)), err)
			}
			for p, b := range before {
				if now, _ := os.ReadFile(p); string(now) != string(b) {
					t.Errorf("the step rewrote %s in the box (%q, was %q)\n%s", p, now, b, out)
					os.WriteFile(p, b, 0o644)
				}
			}
		})
	}
}
