package gitint

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/spec"
)

func TestLockReason(t *testing.T) {
	for _, c := range []struct{ branch, want string }{
		{"cadence/w/a", "cadence: lot a of wave w"},
		{"cadence/auth-rework/L40.b", "cadence: lot L40.b of wave auth-rework"},
		{"feature/x", "cadence: branch feature/x"},
		{"cadence/w", "cadence: branch cadence/w"},
	} {
		if got := LockReason(c.branch); got != c.want {
			t.Errorf("LockReason(%q) = %q, want %q", c.branch, got, c.want)
		}
	}
	for _, c := range []struct {
		reason, branch string
		want           bool
	}{
		{"cadence: lot a of wave w", "cadence/w/a", true},
		{"cadence lot", "cadence/w/a", true}, // cadence's earlier reason
		{"cadence: lot b of wave w", "cadence/w/a", false},
		{"cadence: lot a of wave v", "cadence/w/a", false},
		{"", "cadence/w/a", false},
		{"on a USB disk", "cadence/w/a", false},
	} {
		if got := ownLock(c.reason, c.branch); got != c.want {
			t.Errorf("ownLock(%q, %q) = %v, want %v", c.reason, c.branch, got, c.want)
		}
	}
}

func TestParseWorktreeList(t *testing.T) {
	out := strings.Join([]string{
		"worktree /r", "HEAD 1111", "branch refs/heads/main", "",
		"worktree /wt/a", "HEAD 2222", "branch refs/heads/cadence/w/a", "locked cadence: lot a of wave w", "",
		"worktree /wt/b", "HEAD 3333", "detached", "locked", "",
		"worktree /wt/c", "HEAD 4444", "branch refs/heads/x", "prunable gitdir file points to non-existent location", "",
	}, "\x00")
	want := []worktreeEntry{
		{Path: "/r", Branch: "main"},
		{Path: "/wt/a", Branch: "cadence/w/a", Locked: true, Reason: "cadence: lot a of wave w"},
		{Path: "/wt/b", Locked: true},
		{Path: "/wt/c", Branch: "x", Prunable: true},
	}
	if got := parseWorktreeList(out); !reflect.DeepEqual(got, want) {
		t.Errorf("parseWorktreeList =\n%+v\nwant\n%+v", got, want)
	}
}

// locked reads the lock reason git keeps for the worktree at dir ("" and
// false when it is not locked or not listed).
func locked(t *testing.T, repo, dir string) (string, bool) {
	t.Helper()
	list, err := tgit().worktreeList(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if samePath(e.Path, dir) {
			return e.Reason, e.Locked
		}
	}
	return "", false
}

// The lead deletes a lot's worktree folder: git keeps its record, locked.
// The next Worktree at the same path (the one the state records) drops the
// record and makes the worktree again from the branch, commits and all; so
// does one at another path (the home changed: the record is on the
// branch). Neither git nor cadence says "missing but locked".
func TestWorktreeAfterFolderDeleted(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	dir := startLot(t, g, repo, "a", map[string]string{"a.txt": "a\n"})
	tip := gittest.Git(t, dir, "rev-parse", "HEAD")
	if reason, ok := locked(t, path, dir); !ok || reason != "cadence: lot a of wave w" {
		t.Fatalf("lock of the new worktree: %q %v", reason, ok)
	}
	for _, again := range []string{dir, filepath.Join(t.TempDir(), "elsewhere", "a")} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Worktree(ctx, repo, again, "cadence/w/a", false); err != nil {
			t.Fatalf("Worktree after the folder %s was deleted: %v", dir, err)
		}
		if got := gittest.Git(t, again, "rev-parse", "HEAD"); got != tip {
			t.Errorf("HEAD %s, want the branch's %s", got, tip)
		}
		if got := gittest.Git(t, again, "rev-parse", "--abbrev-ref", "HEAD"); got != "cadence/w/a" {
			t.Errorf("on %s, want cadence/w/a", got)
		}
		if _, ok := locked(t, path, again); !ok {
			t.Errorf("the worktree made again at %s is not locked", again)
		}
		dir = again
	}
	if n := strings.Count(gittest.Git(t, path, "worktree", "list", "--porcelain"), "worktree "); n != 2 {
		t.Errorf("%d worktrees listed, want the checkout and the lot's", n)
	}
}

// A gone worktree on the lot's branch locked by something else than cadence
// is left alone, and the error says so and how to release it.
func TestWorktreeGoneForeignLock(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	other := filepath.Join(t.TempDir(), "usb")
	gittest.Git(t, path, "worktree", "add", "-q", "--lock", "--reason", "on a USB disk", "-b", "cadence/w/a", other)
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}
	_, err := trepos().Worktree(context.Background(), repo, filepath.Join(t.TempDir(), "a"), "cadence/w/a", true)
	if err == nil || !strings.Contains(err.Error(), "locked by something other than cadence") || !strings.Contains(err.Error(), "git worktree unlock") {
		t.Fatalf("err = %v", err)
	}
	if _, ok := locked(t, path, other); !ok {
		t.Error("the foreign record was dropped")
	}
}

// RemoveWorktree of a worktree whose folder is gone drops git's record and
// keeps the branch; of one git does not know, does nothing. Its errors say
// what it was doing, never a bare fork/exec of the missing folder.
func TestRemoveWorktreeGone(t *testing.T) {
	lotEnv(t)
	ctx := context.Background()
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	dir := startLot(t, g, repo, "a", map[string]string{"a.txt": "a\n"})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := g.RemoveWorktree(ctx, repo, dir); err != nil {
		t.Fatalf("RemoveWorktree of a gone folder: %v", err)
	}
	if _, ok := locked(t, path, dir); ok || strings.Contains(gittest.Git(t, path, "worktree", "list"), dir) {
		t.Error("the record is still listed")
	}
	gittest.Git(t, path, "rev-parse", "--verify", "refs/heads/cadence/w/a")
	if err := g.RemoveWorktree(ctx, repo, filepath.Join(t.TempDir(), "never")); err != nil {
		t.Errorf("RemoveWorktree of an unknown folder: %v", err)
	}
	// A worktree git refuses to remove (uncommitted changes) stays locked
	// with cadence's reason, and the error names it.
	b := startLot(t, g, repo, "b")
	os.WriteFile(filepath.Join(b, "draft"), []byte("x"), 0o644)
	err := g.RemoveWorktree(ctx, repo, b)
	if err == nil || !strings.Contains(err.Error(), "remove the worktree "+b) || strings.Contains(err.Error(), "fork/exec") {
		t.Errorf("err = %v", err)
	}
	if reason, ok := locked(t, path, b); !ok || reason != "cadence: lot b of wave w" {
		t.Errorf("after a refused remove: lock %q %v", reason, ok)
	}
}
