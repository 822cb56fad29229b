package gitint

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// guardedRepo makes a repository with three commits on main, a tag, a lot
// branch of wave w and its linked worktree; it returns the repository, the
// worktree and the commits one, two, three.
func guardedRepo(t *testing.T) (repo, wt string, c []string) {
	t.Helper()
	repo = gittest.NewRepo(t, nil)
	c = []string{gittest.Git(t, repo, "rev-parse", "HEAD")}
	for _, m := range []string{"two", "three"} {
		gittest.Git(t, repo, "commit", "-q", "--allow-empty", "-m", m)
		c = append(c, gittest.Git(t, repo, "rev-parse", "HEAD"))
	}
	gittest.Git(t, repo, "tag", "v1", c[0])
	gittest.Git(t, repo, "checkout", "-q", "-b", "work")
	wt = filepath.Join(t.TempDir(), "worktrees", "a")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "cadence/w/a", wt, "main")
	return repo, wt, c
}

func TestSnapshotRefs(t *testing.T) {
	ctx := context.Background()
	repo, _, c := guardedRepo(t)
	refs, err := tgit().SnapshotRefs(ctx, repo, "refs/heads/cadence/w/")
	if err != nil {
		t.Fatal(err)
	}
	want := Refs{"refs/heads/main": c[2], "refs/heads/work": c[2], "refs/tags/v1": c[0]}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("SnapshotRefs = %v, want %v (no lot branch, no remote-tracking or cadence ref)", refs, want)
	}
	all, _ := tgit().SnapshotRefs(ctx, repo, "")
	if all["refs/heads/cadence/w/a"] != c[2] {
		t.Errorf("without skip, the lot branch is read too: %v", all)
	}
}

func TestRefsDiff(t *testing.T) {
	before := Refs{"refs/heads/main": "a", "refs/heads/gone": "g", "refs/tags/same": "s"}
	after := Refs{"refs/heads/main": "b", "refs/tags/new": "n", "refs/tags/same": "s"}
	got := before.Diff(after)
	want := []RefMove{
		{Ref: "refs/heads/gone", Old: "g"},
		{Ref: "refs/heads/main", Old: "a", New: "b"},
		{Ref: "refs/tags/new", New: "n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff = %+v, want %+v", got, want)
	}
	if d := before.Diff(before); len(d) != 0 {
		t.Errorf("no change: %+v", d)
	}
}

// TestRestoreRefs: a moved, a created and a deleted ref are put back, the
// foreign values kept under the lot's rescue refs (numbered after the ones
// it has), and a ref that moved again since is left alone and said so.
func TestRestoreRefs(t *testing.T) {
	ctx := context.Background()
	repo, _, c := guardedRepo(t)
	gittest.Git(t, repo, "update-ref", RescuePrefix+"w/a/1", c[0]) // an earlier incident
	before, _ := tgit().SnapshotRefs(ctx, repo, "refs/heads/cadence/w/")
	gittest.Git(t, repo, "update-ref", "refs/heads/main", c[0])
	gittest.Git(t, repo, "tag", "v9", c[1])
	gittest.Git(t, repo, "update-ref", "-d", "refs/tags/v1")
	gittest.Git(t, repo, "update-ref", "refs/heads/work", c[1])
	after, _ := tgit().SnapshotRefs(ctx, repo, "refs/heads/cadence/w/")
	moves := before.Diff(after)
	// work moves again before cadence puts it back.
	gittest.Git(t, repo, "update-ref", "refs/heads/work", c[0])

	got := tgit().RestoreRefs(ctx, repo, "w", "a", moves)
	if len(got) != 4 {
		t.Fatalf("%d results for %d moves", len(got), len(moves))
	}
	byRef := map[string]PutBack{}
	for _, p := range got {
		byRef[p.Ref] = p
		t.Log(p)
	}
	for ref, want := range map[string]string{"refs/heads/main": c[2], "refs/tags/v1": c[0], "refs/heads/work": c[0]} {
		if now, _ := gittest.Try(repo, "rev-parse", ref); now != want {
			t.Errorf("%s at %s, want %s", ref, now, want)
		}
	}
	if _, err := gittest.Try(repo, "rev-parse", "--verify", "-q", "refs/tags/v9"); err == nil {
		t.Error("the created tag v9 is still there")
	}
	// Rescue refs: numbered from 2, in ref order; none for the deleted tag.
	for ref, want := range map[string]struct{ rescue, sha string }{
		"refs/heads/main": {RescuePrefix + "w/a/2", c[0]},
		"refs/heads/work": {RescuePrefix + "w/a/3", c[1]},
		"refs/tags/v9":    {RescuePrefix + "w/a/4", c[1]},
		"refs/tags/v1":    {"", ""},
	} {
		p := byRef[ref]
		if p.Rescue != want.rescue {
			t.Errorf("%s kept under %q, want %q", ref, p.Rescue, want.rescue)
		}
		if want.rescue != "" {
			if got := gittest.Git(t, repo, "rev-parse", want.rescue); got != want.sha {
				t.Errorf("%s holds %s, want %s", want.rescue, got, want.sha)
			}
		}
	}
	if p := byRef["refs/heads/work"]; p.Err == nil || !strings.Contains(p.String(), "NOT put back: it moved again meanwhile") {
		t.Errorf("work: %v", p)
	}
	for _, ref := range []string{"refs/heads/main", "refs/tags/v9", "refs/tags/v1"} {
		if byRef[ref].Err != nil {
			t.Errorf("%s: %v", ref, byRef[ref].Err)
		}
	}
	if refs, _ := tgit().RescueRefs(ctx, repo, "w", "a"); len(refs) != 4 {
		t.Errorf("RescueRefs = %v", refs)
	}
}

func TestWorktreeHead(t *testing.T) {
	repo, wt, c := guardedRepo(t)
	if h, err := WorktreeHead(wt); err != nil || h != "refs/heads/cadence/w/a" {
		t.Errorf("on its branch: %q, %v", h, err)
	}
	gittest.Git(t, wt, "checkout", "-q", "--detach")
	if h, _ := WorktreeHead(wt); h != c[2] {
		t.Errorf("detached: %q, want %s", h, c[2])
	}
	if _, err := WorktreeHead(repo); err == nil {
		t.Error("the main checkout is not a linked worktree")
	}
	// In the middle of a rebase of the lot's branch, HEAD is detached but
	// the worktree is on the branch.
	gittest.Git(t, wt, "checkout", "-q", "cadence/w/a")
	gd, _, _ := linkedGitDir(wt)
	if err := os.MkdirAll(filepath.Join(gd, "rebase-merge"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(gd, "rebase-merge", "head-name"), []byte("refs/heads/cadence/w/a\n"), 0o644)
	gittest.Git(t, wt, "checkout", "-q", "--detach")
	if h, _ := WorktreeHead(wt); h != "refs/heads/cadence/w/a" {
		t.Errorf("mid-rebase: %q", h)
	}
}

// TestPutOnBranch: a clean worktree on main is checked out on its branch
// again; a dirty one gets HEAD pointed back, its files as they were; a
// detached HEAD's commit is kept under a rescue ref first.
func TestPutOnBranch(t *testing.T) {
	ctx := context.Background()
	repo, wt, _ := guardedRepo(t)
	gittest.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "lot work")
	lotTip := gittest.Git(t, wt, "rev-parse", "HEAD")

	gittest.Git(t, wt, "checkout", "-q", "main")
	how, err := tgit().PutOnBranch(ctx, repo, wt, "cadence/w/a", "w", "a")
	if err != nil || !strings.Contains(how, "checked out cadence/w/a") {
		t.Fatalf("clean: %q, %v", how, err)
	}
	if h, _ := WorktreeHead(wt); h != "refs/heads/cadence/w/a" || gittest.Git(t, wt, "rev-parse", "HEAD") != lotTip {
		t.Errorf("clean: HEAD %s", h)
	}

	gittest.Git(t, wt, "checkout", "-q", "main")
	os.WriteFile(filepath.Join(wt, "README.md"), []byte("changed\n"), 0o644)
	how, err = tgit().PutOnBranch(ctx, repo, wt, "cadence/w/a", "w", "a")
	if err != nil || !strings.Contains(how, "symbolic-ref") {
		t.Fatalf("dirty: %q, %v", how, err)
	}
	if h, _ := WorktreeHead(wt); h != "refs/heads/cadence/w/a" {
		t.Errorf("dirty: HEAD %s", h)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "README.md")); string(b) != "changed\n" {
		t.Errorf("the uncommitted change is gone: %q", b)
	}
	gittest.Git(t, wt, "checkout", "-q", "--", "README.md")

	gittest.Git(t, wt, "checkout", "-q", "--detach")
	gittest.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "detached work")
	detached := gittest.Git(t, wt, "rev-parse", "HEAD")
	how, err = tgit().PutOnBranch(ctx, repo, wt, "cadence/w/a", "w", "a")
	if err != nil || !strings.Contains(how, "kept under "+RescuePrefix+"w/a/1") {
		t.Fatalf("detached: %q, %v", how, err)
	}
	if got := gittest.Git(t, repo, "rev-parse", RescuePrefix+"w/a/1"); got != detached {
		t.Errorf("the detached commit is not kept: %s", got)
	}
	if h, _ := WorktreeHead(wt); h != "refs/heads/cadence/w/a" {
		t.Errorf("detached: HEAD %s", h)
	}
}
