package transport

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestRoundTrip sends a lot to a worker, makes two commits there, and
// brings them back: the lead's branch and worktree end at the worker's
// head with the very same commits, and the worker's repository has no
// remote, no hook and nowhere to push to.
func TestRoundTrip(t *testing.T) {
	t.Run("base fetched", func(t *testing.T) { roundTrip(t, newTransport(t)) })
	t.Run("base cached", func(t *testing.T) {
		tr := newTransport(t)
		tr.BaseCache = filepath.Join(t.TempDir(), "bases")
		roundTrip(t, tr)
	})
}

func roundTrip(t *testing.T, tr *Transport) {
	ctx := testCtx(t)
	l := newLead(t)
	w := sendTo(t, tr, l)
	if w.head != l.sent {
		t.Fatalf("checkout head %s, sent %s", w.head, l.sent)
	}
	if got := gittest.Git(t, w.dir, "symbolic-ref", "HEAD"); got != "refs/heads/"+testBranch {
		t.Fatalf("worker HEAD is %s", got)
	}
	if got := gittest.Git(t, w.dir, "status", "--porcelain"); got != "" {
		t.Fatalf("worker checkout not clean: %s", got)
	}
	if b, err := os.ReadFile(filepath.Join(w.dir, "src", "b.txt")); err != nil || string(b) != "b\n" {
		t.Fatalf("worker checkout lacks the lot's file: %q %v", b, err)
	}
	if got := gittest.Git(t, w.dir, "remote"); got != "" {
		t.Fatalf("worker has remotes: %q", got)
	}
	if out, err := gittest.Try(w.dir, "fsck", "--no-dangling"); err != nil {
		t.Fatalf("git fsck of the worker's repository: %v\n%s", err, out)
	}
	if out, err := gittest.Try(w.dir, "push"); err == nil {
		t.Fatalf("git push in the worker's repository succeeded: %s", out)
	}
	cfg := gittest.Git(t, w.dir, "config", "--local", "--list")
	for _, line := range strings.Split(cfg, "\n") {
		if strings.HasPrefix(line, "remote.") || strings.HasPrefix(line, "include") || strings.HasPrefix(line, "branch.") {
			t.Errorf("worker config has %s", line)
		}
	}
	hooks := gittest.Git(t, w.dir, "config", "core.hooksPath")
	if entries, err := os.ReadDir(hooks); err != nil || len(entries) > 0 {
		t.Errorf("core.hooksPath %s: %v %v", hooks, entries, err)
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".git", "hooks")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".git/hooks exists in the worker's repository: %v", err)
	}

	gittest.Commit(t, w.dir, "lot: second", map[string]string{"src/c.txt": "c\n"})
	gittest.Commit(t, w.dir, "lot: third", map[string]string{"src/a.txt": "a2\n"})
	head, err := tr.Head(ctx, w.dir)
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(t.TempDir(), "result.bundle")
	if err := tr.ResultBundle(ctx, w.dir, testBranch, w.head, res, 1<<20); err != nil {
		t.Fatal(err)
	}
	got, err := tr.Accept(ctx, l.repo, l.wt, res, testBranch, l.sent, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got != head {
		t.Fatalf("Accept returned %s, worker head %s", got, head)
	}
	if b := gittest.Git(t, l.repo, "rev-parse", "refs/heads/"+testBranch); b != head {
		t.Fatalf("lead branch at %s, want %s", b, head)
	}
	if h := gittest.Git(t, l.wt, "rev-parse", "HEAD"); h != head {
		t.Fatalf("lead worktree at %s, want %s", h, head)
	}
	if st := gittest.Git(t, l.wt, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("lead worktree not clean: %s", st)
	}
	if b, err := os.ReadFile(filepath.Join(l.wt, "src", "a.txt")); err != nil || string(b) != "a2\n" {
		t.Fatalf("lead worktree file: %q %v", b, err)
	}
	want := gittest.Git(t, w.dir, "log", "--format=%H %T %s", l.base+".."+head)
	if have := gittest.Git(t, l.repo, "log", "--format=%H %T %s", l.base+".."+head); have != want {
		t.Fatalf("commits differ:\nlead:\n%s\nworker:\n%s", have, want)
	}
	if refs := gittest.Git(t, l.repo, "for-each-ref", "refs/cadence/"); refs != "" {
		t.Fatalf("refs left in the lead's repository: %s", refs)
	}
	// the same result again (the caller stopped before recording it):
	// the same head, nothing changes
	before := gittest.Snapshot(t, l.repo, l.wt)
	if again, err := tr.Accept(ctx, l.repo, l.wt, res, testBranch, l.sent, 1<<20); err != nil || again != head {
		t.Fatalf("Accept again = %s, %v; want %s", again, err, head)
	}
	if after := gittest.Snapshot(t, l.repo, l.wt); after != before {
		t.Fatalf("the lead changed:\n%s\n---\n%s", before, after)
	}
}

// TestEmptyRange sends a lot that has no commit yet and brings back a
// result with no commit: both are bundles git reads, and Accept leaves
// the branch where it is.
func TestEmptyRange(t *testing.T) {
	tr := newTransport(t)
	ctx := testCtx(t)
	l := newLead(t)
	gittest.Git(t, l.wt, "reset", "-q", "--hard", l.base)
	l.sent = l.base
	w := sendTo(t, tr, l)
	if w.head != l.base {
		t.Fatalf("checkout head %s, want the base %s", w.head, l.base)
	}
	res := filepath.Join(t.TempDir(), "result.bundle")
	if err := tr.ResultBundle(ctx, w.dir, testBranch, w.head, res, 1<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := gittest.Try(l.repo, "bundle", "verify", res); err != nil {
		t.Fatalf("git bundle verify of the empty result: %v\n%s", err, out)
	}
	before := gittest.Snapshot(t, l.repo, l.wt)
	got, err := tr.Accept(ctx, l.repo, l.wt, res, testBranch, l.sent, 1<<20)
	if err != nil || got != l.base {
		t.Fatalf("Accept = %s, %v; want %s", got, err, l.base)
	}
	if after := gittest.Snapshot(t, l.repo, l.wt); after != before {
		t.Fatalf("the lead changed:\n%s\n---\n%s", before, after)
	}
}

// TestBaseBundleCached makes the base bundle of a second lot on the same
// base from the cache, and that of many concurrent callers once.
func TestBaseBundleCached(t *testing.T) {
	tr := newTransport(t)
	ctx := testCtx(t)
	l := newLead(t)
	cache := filepath.Join(t.TempDir(), "cache")
	first, err := tr.BaseBundle(ctx, l.repo, l.base, cache)
	if err != nil {
		t.Fatal(err)
	}
	fi1, _ := os.Stat(first)
	second, err := tr.BaseBundle(ctx, l.repo, l.base, cache)
	if err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(second)
	if first != second || !os.SameFile(fi1, fi2) || !fi1.ModTime().Equal(fi2.ModTime()) {
		t.Fatalf("second lot's base bundle %s was made again (first %s)", second, first)
	}
	if refs := gittest.Git(t, l.repo, "bundle", "list-heads", first); refs != l.base+" "+BaseRefPrefix+l.base {
		t.Fatalf("base bundle names %q", refs)
	}
	if refs := gittest.Git(t, l.repo, "for-each-ref", "refs/cadence/"); refs != "" {
		t.Fatalf("BaseBundle wrote refs into the lead's repository: %s", refs)
	}

	cache2 := filepath.Join(t.TempDir(), "cache")
	const n = 6
	type made struct {
		path string
		fi   os.FileInfo
		err  error
	}
	results := make(chan made, n)
	for range n {
		go func() {
			p, err := tr.BaseBundle(ctx, l.repo, l.base, cache2)
			var fi os.FileInfo
			if err == nil {
				fi, err = os.Stat(p)
			}
			results <- made{p, fi, err}
		}()
	}
	var firstMade made
	for i := range n {
		m := <-results
		if m.err != nil {
			t.Fatal(m.err)
		}
		if i == 0 {
			firstMade = m
		} else if m.path != firstMade.path || !os.SameFile(m.fi, firstMade.fi) {
			t.Fatalf("concurrent callers got different files: %s, %s", m.path, firstMade.path)
		}
	}
	entries, err := os.ReadDir(cache2)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{l.base + ".bundle", l.base + ".lock"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("cache holds %v, want %v", names, want)
	}
}

// TestBaseCache checks out two lots of one base with a BaseCache: the
// base is indexed once into the cache, and each checkout holds its own
// copy of its pack files, so writing into one reaches neither the cache
// nor the other.
func TestBaseCache(t *testing.T) {
	tr := newTransport(t)
	tr.BaseCache = filepath.Join(t.TempDir(), "bases")
	l := newLead(t)
	w1 := sendTo(t, tr, l)
	w2 := sendTo(t, tr, l)
	entries, err := os.ReadDir(tr.BaseCache)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Name() != l.base+".git" || entries[1].Name() != l.base+".lock" {
		t.Fatalf("the cache holds %v", entries)
	}
	cached, err := filepath.Glob(filepath.Join(tr.BaseCache, l.base+".git", "objects", "pack", "*.pack"))
	if err != nil || len(cached) != 1 {
		t.Fatalf("cached packs %v, %v", cached, err)
	}
	for _, w := range []worker{w1, w2} {
		copied := filepath.Join(w.dir, ".git", "objects", "pack", filepath.Base(cached[0]))
		a, err1 := os.Stat(copied)
		b, err2 := os.Stat(cached[0])
		if err1 != nil || err2 != nil || os.SameFile(a, b) {
			t.Fatalf("%s is not a copy of the cache's pack: %v %v", copied, err1, err2)
		}
		if got := gittest.Git(t, w.dir, "rev-parse", BaseRefPrefix+l.base); got != l.base {
			t.Fatalf("base ref at %s", got)
		}
	}
}

// TestCheckoutRefuses refuses a folder that is not empty (left as it is)
// and bundles that are not what they are given as (nothing left behind),
// and a result bundle without a cap.
func TestCheckoutRefuses(t *testing.T) {
	tr := newTransport(t)
	ctx := testCtx(t)
	l := newLead(t)
	base, err := tr.BaseBundle(ctx, l.repo, l.base, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	lot := filepath.Join(t.TempDir(), "lot.bundle")
	if err := tr.LotBundle(ctx, l.repo, testBranch, l.base, lot); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(t.TempDir(), "full")
	write(t, filepath.Join(full, "mine.txt"), "mine\n")
	if _, err := tr.Checkout(ctx, full, base, lot, testBranch); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Checkout into a folder with files: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(full, "mine.txt")); err != nil || string(b) != "mine\n" {
		t.Fatalf("the folder's file: %q %v", b, err)
	}
	l2 := newLead(t)
	gittest.Commit(t, l2.repo, "another history", map[string]string{"x.txt": "x\n"})
	gittest.Git(t, l2.wt, "rebase", "-q", "main")
	otherLot := filepath.Join(t.TempDir(), "other.bundle")
	if err := tr.LotBundle(ctx, l2.repo, testBranch, gittest.Git(t, l2.repo, "rev-parse", "main"), otherLot); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string][2]string{
		"lot as base":               {lot, lot},
		"base as lot":               {base, base},
		"other branch":              {base, lot},
		"lot of another repository": {base, otherLot},
	} {
		dir := filepath.Join(t.TempDir(), "work")
		branch := testBranch
		if name == "other branch" {
			branch = "cadence/w/other"
		}
		if _, err := tr.Checkout(ctx, dir, c[0], c[1], branch); err == nil {
			t.Fatalf("%s: Checkout succeeded", name)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: Checkout left %s: %v", name, dir, err)
		}
	}
	w := sendTo(t, tr, l)
	if err := tr.ResultBundle(ctx, w.dir, testBranch, w.head, filepath.Join(t.TempDir(), "r.bundle"), 0); err == nil {
		t.Fatal("ResultBundle without a cap succeeded")
	}
}

// TestAcceptConcurrentLots accepts the results of two lots of one
// repository at once: both branches and worktrees end at their heads.
func TestAcceptConcurrentLots(t *testing.T) {
	tr := newTransport(t)
	ctx := testCtx(t)
	l := newLead(t)
	l2 := l
	l2.wt = filepath.Join(t.TempDir(), "wt2")
	const branch2 = "cadence/w/lot2"
	gittest.Git(t, l.repo, "worktree", "add", "-q", "-b", branch2, l2.wt, l.base)
	l2.sent = gittest.Commit(t, l2.wt, "lot2: first", map[string]string{"src/two.txt": "2\n"})
	type lotCase struct {
		l      lead
		branch string
		res    string
		head   string
	}
	var lots []lotCase
	for _, c := range []struct {
		l      lead
		branch string
	}{{l, testBranch}, {l2, branch2}} {
		base, err := tr.BaseBundle(ctx, c.l.repo, c.l.base, filepath.Join(t.TempDir(), "cache"))
		if err != nil {
			t.Fatal(err)
		}
		lot := filepath.Join(t.TempDir(), "lot.bundle")
		if err := tr.LotBundle(ctx, c.l.repo, c.branch, c.l.base, lot); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "work")
		sent, err := tr.Checkout(ctx, dir, base, lot, c.branch)
		if err != nil {
			t.Fatal(err)
		}
		head := gittest.Commit(t, dir, "remote", map[string]string{"src/r-" + filepath.Base(c.branch) + ".txt": "r\n"})
		res := filepath.Join(t.TempDir(), "result.bundle")
		if err := tr.ResultBundle(ctx, dir, c.branch, sent, res, 1<<20); err != nil {
			t.Fatal(err)
		}
		lots = append(lots, lotCase{c.l, c.branch, res, head})
	}
	errs := make(chan error, len(lots))
	for _, c := range lots {
		go func() {
			got, err := tr.Accept(ctx, c.l.repo, c.l.wt, c.res, c.branch, c.l.sent, 1<<20)
			if err == nil && got != c.head {
				err = fmt.Errorf("%s: Accept = %s, want %s", c.branch, got, c.head)
			}
			errs <- err
		}()
	}
	for range lots {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range lots {
		if h := gittest.Git(t, c.l.wt, "rev-parse", "HEAD"); h != c.head {
			t.Fatalf("%s: worktree at %s, want %s", c.branch, h, c.head)
		}
	}
}
