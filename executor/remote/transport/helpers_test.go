package transport

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// testBranch is the lot branch of the tests, as cadence names one.
const testBranch = "cadence/w/lot1"

// newTransport returns a Transport whose git has a test identity and no
// configuration but the repositories' own (HOME is a temporary folder).
func newTransport(t testing.TB) *Transport {
	return New(append(gittest.Env(), "HOME="+t.TempDir()))
}

// testCtx is a context bounded for one test.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// lead is a lead's repository with a lot: its base commit on main, the
// lot's branch with one commit above it (sent), checked out in a worktree.
type lead struct {
	repo, wt, base, sent string
}

func newLead(t testing.TB) lead {
	t.Helper()
	repo := gittest.NewRepo(t, map[string]string{"README.md": "# base\n", "src/a.txt": "a\n"})
	base := gittest.Git(t, repo, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", testBranch, wt, base)
	sent := gittest.Commit(t, wt, "lot: first step", map[string]string{"src/b.txt": "b\n"})
	return lead{repo: repo, wt: wt, base: base, sent: sent}
}

// worker is a worker's checkout of a lead's lot, through the bundles.
type worker struct {
	dir, head string
}

// sendTo makes the base and lot bundles of l and checks them out in a
// fresh folder, as a worker does.
func sendTo(t testing.TB, tr *Transport, l lead) worker {
	t.Helper()
	ctx := testCtx(t)
	base, err := tr.BaseBundle(ctx, l.repo, l.base, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	lot := filepath.Join(t.TempDir(), "lot.bundle")
	if err := tr.LotBundle(ctx, l.repo, testBranch, l.base, lot); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "work")
	head, err := tr.Checkout(ctx, dir, base, lot, testBranch)
	if err != nil {
		t.Fatal(err)
	}
	return worker{dir: dir, head: head}
}

// size is the size of the file at path.
func size(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
