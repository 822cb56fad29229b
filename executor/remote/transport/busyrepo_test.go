package transport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestAcceptWhileAnotherWorktreeIsMade: another lot's worktree being made
// in the lead's repository has, for a moment, a HEAD that names no object
// (git worktree add writes a placeholder first). A result accepted at
// that moment is taken, never refused as corrupt: the bundle's checks do
// not walk the lead's refs.
func TestAcceptWhileAnotherWorktreeIsMade(t *testing.T) {
	tr := newTransport(t)
	ctx := testCtx(t)
	l := newLead(t)
	w := sendTo(t, tr, l)
	gittest.Commit(t, w.dir, "lot: second", map[string]string{"src/c.txt": "c\n"})
	res := filepath.Join(t.TempDir(), "result.bundle")
	if err := tr.ResultBundle(ctx, w.dir, testBranch, w.head, res, 1<<20); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, l.repo, "worktree", "add", "-q", "-b", "cadence/w/other", other, "main")
	common := strings.TrimSpace(gittest.Git(t, l.repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
	head := filepath.Join(common, "worktrees", "other", "HEAD")
	if err := os.WriteFile(head, []byte(strings.Repeat("0", 39)+"1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Accept(ctx, l.repo, l.wt, res, testBranch, l.sent, 1<<20); err != nil {
		t.Fatalf("Accept while another worktree's HEAD names no object: %v", err)
	}
}
