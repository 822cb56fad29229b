package transport

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestBundleBytesFollowTheChange sends and brings back a lot that changes
// one small file of a repository with 5 MB of history: the lot's and the
// result's bundles are a few KB, the base bundle holds the history.
func TestBundleBytesFollowTheChange(t *testing.T) {
	tr := newTransport(t)
	ctx := testCtx(t)
	repo := gittest.NewRepo(t, map[string]string{"README.md": "# big\n", "src/small.txt": "small\n"})
	// 5 commits of 1 MB that does not compress (a fixed seed: the same
	// bytes every run)
	rnd := rand.NewChaCha8([32]byte{26})
	for i := range 5 {
		blob := make([]byte, 1<<20)
		rnd.Read(blob)
		gittest.Commit(t, repo, "history", map[string]string{filepath.Join("data", string(rune('a'+i))+".bin"): string(blob)})
	}
	base := gittest.Git(t, repo, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", testBranch, wt, base)
	sent := gittest.Commit(t, wt, "lot: a small change", map[string]string{"src/small.txt": "small, changed by the lot\n"})
	l := lead{repo: repo, wt: wt, base: base, sent: sent}

	w := sendTo(t, tr, l)
	baseBundle, err := tr.BaseBundle(ctx, repo, base, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	lot := filepath.Join(t.TempDir(), "lot.bundle")
	if err := tr.LotBundle(ctx, repo, testBranch, base, lot); err != nil {
		t.Fatal(err)
	}
	gittest.Commit(t, w.dir, "lot: another small change", map[string]string{"src/small.txt": "small, changed again\n"})
	res := filepath.Join(t.TempDir(), "result.bundle")
	if err := tr.ResultBundle(ctx, w.dir, testBranch, w.head, res, 1<<20); err != nil {
		t.Fatal(err)
	}
	const few = 4 << 10 // one commit, one tree path, one small blob, a header
	if n := size(t, lot); n > few {
		t.Errorf("lot bundle: %d bytes for a one-line change, want at most %d", n, few)
	}
	if n := size(t, res); n > few {
		t.Errorf("result bundle: %d bytes for a one-line change, want at most %d", n, few)
	}
	if n := size(t, baseBundle); n < 5<<20 {
		t.Errorf("base bundle: %d bytes, less than the 5 MB of history it must hold", n)
	}
	t.Logf("base %d bytes, lot %d bytes, result %d bytes", size(t, baseBundle), size(t, lot), size(t, res))
	if _, err := tr.Accept(ctx, repo, wt, res, testBranch, sent, 1<<20); err != nil {
		t.Fatal(err)
	}
}
