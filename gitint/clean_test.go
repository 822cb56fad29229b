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

// leftover returns the leftover of kind at path (a branch name for a
// branch), failing the test when there is none.
func leftover(t *testing.T, ls []Leftover, kind, path string) Leftover {
	t.Helper()
	for _, l := range ls {
		if l.Kind == kind && (l.Path == path || samePath(l.Path, path)) {
			return l
		}
	}
	t.Fatalf("no %s %s among %+v", kind, path, ls)
	return Leftover{}
}

func all(string) bool { return true }

// A worktree kept for its uncommitted changes (here an untracked file, on
// a branch with no commit of its own) keeps its branch: deleting it would
// leave the worktree on a branch that is not there ("No commits yet").
// removeBranch checks again, so a branch checked out anywhere is never
// deleted.
func TestCleanKeepsBranchOfKeptWorktree(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a")
	os.WriteFile(filepath.Join(a, "notes.txt"), []byte("draft\n"), 0o644)
	ls, err := tgit().Leftovers(ctx, repo, "w", "cadence/w", all)
	if err != nil {
		t.Fatal(err)
	}
	if wt := leftover(t, ls, "worktree", a); !strings.Contains(wt.Keep, "uncommitted changes to notes.txt") {
		t.Errorf("worktree: %+v", wt)
	}
	br := leftover(t, ls, "branch", "cadence/w/a")
	if !strings.Contains(br.Keep, "checked out in the worktree") {
		t.Errorf("branch: %+v, want it kept", br)
	}
	br.Keep = ""
	if err := g.RemoveLeftover(ctx, repo, br); err == nil || !strings.Contains(err.Error(), "checked out in the worktree") {
		t.Errorf("RemoveLeftover of a checked-out branch: %v", err)
	}
	gittest.Git(t, path, "rev-parse", "--verify", "refs/heads/cadence/w/a")

	// A worktree on the wave's branch that is not the wave's (known says
	// no) is not listed, and its branch stays too.
	ls, err = tgit().Leftovers(ctx, repo, "w", "cadence/w", func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Kind == "worktree" {
			t.Errorf("a worktree the wave does not know is listed: %+v", l)
		}
	}
	if br := leftover(t, ls, "branch", "cadence/w/a"); br.Keep == "" {
		t.Errorf("branch of a foreign worktree: %+v, want it kept", br)
	}

	// Once the file is gone, both go.
	os.Remove(filepath.Join(a, "notes.txt"))
	ls, _ = tgit().Leftovers(ctx, repo, "w", "cadence/w", all)
	for _, kind := range []string{"worktree", "branch"} {
		for _, l := range ls {
			if l.Kind != kind {
				continue
			}
			if err := g.RemoveLeftover(ctx, repo, l); err != nil {
				t.Errorf("remove %s %s: %v", l.Kind, l.Path, err)
			}
		}
	}
	if _, err := gittest.Try(path, "rev-parse", "--verify", "refs/heads/cadence/w/a"); err == nil {
		t.Error("the branch is still there")
	}
}

// A worktree of the wave whose folder is gone is listed as Gone (found by
// its lock reason even when known does not name it), with no fork/exec
// anywhere; removing it drops git's record and keeps the branch with its
// commits.
func TestCleanGoneWorktree(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"a.txt": "a\n"})
	tip := gittest.Git(t, a, "rev-parse", "HEAD")
	if err := os.RemoveAll(a); err != nil {
		t.Fatal(err)
	}
	ls, err := tgit().Leftovers(ctx, repo, "w", "cadence/w", func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	wt := leftover(t, ls, "worktree", a)
	if !wt.Gone || wt.Keep != "" {
		t.Errorf("gone worktree: %+v", wt)
	}
	if br := leftover(t, ls, "branch", "cadence/w/a"); !strings.Contains(br.Keep, "1 commit(s) not in main") {
		t.Errorf("branch: %+v", br)
	}
	for _, l := range ls {
		if strings.Contains(l.Keep, "fork/exec") {
			t.Errorf("%+v", l)
		}
	}
	if err := g.RemoveLeftover(ctx, repo, wt); err != nil {
		t.Fatalf("remove the gone worktree: %v", err)
	}
	if strings.Contains(gittest.Git(t, path, "worktree", "list"), a) {
		t.Error("its record is still listed")
	}
	if got := gittest.Git(t, path, "rev-parse", "refs/heads/cadence/w/a"); got != tip {
		t.Errorf("branch at %s, want %s", got, tip)
	}
}
