package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/spec"
)

// lotEnv sets the git identity for gitint's own git calls in this test.
func lotEnv(t testing.TB) {
	t.Setenv("GIT_AUTHOR_NAME", "cadence test")
	t.Setenv("GIT_AUTHOR_EMAIL", "test@cadence.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "cadence test")
	t.Setenv("GIT_COMMITTER_EMAIL", "test@cadence.invalid")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
}

// startLot makes the lot's worktree and branch, and commits files there.
func startLot(t *testing.T, g *Repos, repo *spec.Repo, id string, commits ...map[string]string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(repo.Path), "wt-"+filepath.Base(repo.Path)+"-"+id)
	if _, err := g.Worktree(context.Background(), repo, dir, "cadence/w/"+id, true); err != nil {
		t.Fatal(err)
	}
	for i, files := range commits {
		gittest.Commit(t, dir, fmt.Sprintf("%s: commit %d (%s)", id, i+1, id), files)
	}
	return dir
}

// integrate rebases and advances, as the executor does.
func integrate(t *testing.T, g *Repos, repo *spec.Repo, id, dir string) (string, error) {
	t.Helper()
	ctx := context.Background()
	unlock, err := g.LockIntegration(ctx, repo, "w")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := g.Rebase(ctx, repo, dir); err != nil {
		return "", err
	}
	return g.Advance(ctx, repo, "cadence/w/"+id, "")
}

func TestFastForwardAndRebase(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"a.txt": "a\n"})
	b := startLot(t, g, repo, "b", map[string]string{"b.txt": "b\n"})
	shaA, err := integrate(t, g, repo, "a", a)
	if err != nil || shaA != gittest.Git(t, path, "rev-parse", "main") {
		t.Fatalf("a: %v", err)
	}
	// b started before a moved the base: it is rebased, then fast-forwarded.
	if _, err := integrate(t, g, repo, "b", b); err != nil {
		t.Fatal(err)
	}
	log := gittest.Git(t, path, "log", "--format=%s", "main")
	if log != "b: commit 1 (b)\na: commit 1 (a)\ninitial commit" {
		t.Errorf("history:\n%s", log)
	}
	if gittest.Git(t, path, "log", "--merges", "--oneline") != "" {
		t.Error("a merge commit in the history")
	}
	// Integrating again changes nothing.
	again, err := integrate(t, g, repo, "b", b)
	if err != nil || again != gittest.Git(t, path, "rev-parse", "main") {
		t.Errorf("second integration: %v", err)
	}
}

func TestChangelogUnionOverThreeLots(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"CHANGELOG.md": ancestor})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main", Changelog: "CHANGELOG.md"}
	g := trepos()
	entry := func(line string) string {
		return strings.Replace(ancestor, "- first entry\n", "- first entry\n"+line+"\n", 1)
	}
	a := startLot(t, g, repo, "a", map[string]string{"CHANGELOG.md": entry("- a: token store"), "a.go": "a\n"})
	b := startLot(t, g, repo, "b", map[string]string{"CHANGELOG.md": entry("- b: oauth")})
	// c's second commit rewrites the entry its first added.
	c := startLot(t, g, repo, "c",
		map[string]string{"CHANGELOG.md": entry("- c: audit")},
		map[string]string{"CHANGELOG.md": entry("- c: audit log, with retention")})
	for _, l := range []struct{ id, dir string }{{"a", a}, {"b", b}, {"c", c}} {
		if _, err := integrate(t, g, repo, l.id, l.dir); err != nil {
			t.Fatalf("%s: %v", l.id, err)
		}
	}
	got := gittest.Git(t, path, "show", "main:CHANGELOG.md")
	for _, want := range []string{"- a: token store", "- b: oauth", "- c: audit log, with retention"} {
		if strings.Count(got, want) != 1 {
			t.Errorf("changelog lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "- c: audit\n") || strings.Contains(got, "<<<<<<<") {
		t.Errorf("changelog:\n%s", got)
	}
}

// TestRealConflictLeavesEverything: a conflict outside the changelog
// aborts the rebase; branch, base, worktree and the user's checkout are
// byte-identical to before.
func TestRealConflictLeavesEverything(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"x.go": "package x\n// v0\n", "CHANGELOG.md": ancestor})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main", Changelog: "CHANGELOG.md"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"x.go": "package x\n// from a\n"})
	b := startLot(t, g, repo, "b", map[string]string{"x.go": "package x\n// from b\n", "CHANGELOG.md": strings.Replace(ancestor, "- first entry\n", "- first entry\n- b\n", 1)})
	if _, err := integrate(t, g, repo, "a", a); err != nil {
		t.Fatal(err)
	}
	before := gittest.Snapshot(t, path, path, b)
	_, err := integrate(t, g, repo, "b", b)
	var ce *ConflictError
	if !errors.As(err, &ce) || strings.Join(ce.Files, ",") != "x.go" {
		t.Fatalf("err = %v", err)
	}
	if after := gittest.Snapshot(t, path, path, b); after != before {
		t.Errorf("something changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := gittest.Try(b, "rebase", "--show-current-patch"); err == nil {
		t.Error("a rebase is still in progress")
	}
}

// TestDirtyCheckoutRefused: the user's checkout of the base has changes:
// the fast-forward is refused, nothing changes, and the message says why.
func TestDirtyCheckoutRefused(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"x.txt": "x\n"})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"a.txt": "a\n"})
	writeFile(t, filepath.Join(path, "x.txt"), "the user's edit\n")
	before := gittest.Snapshot(t, path, path, a)
	_, err := integrate(t, g, repo, "a", a)
	if err == nil || !strings.Contains(err.Error(), "uncommitted changes to x.txt") {
		t.Fatalf("err = %v", err)
	}
	if after := gittest.Snapshot(t, path, path, a); after != before {
		t.Error("something changed")
	}
}

// TestUpdateRefRefusesMovedBase: with the base not checked out anywhere,
// update-ref is used with the expected old value: a base moved between
// the check and the update is not overwritten.
func TestUpdateRefRefusesMovedBase(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, nil)
	gittest.Git(t, path, "checkout", "-q", "-b", "other")
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	if _, err := g.Rebase(ctx, repo, a); err != nil {
		t.Fatal(err)
	}
	// Someone moves main after the rebase: Advance must refuse.
	gittest.Git(t, path, "commit", "-q", "--allow-empty", "-m", "someone else")
	gittest.Git(t, path, "update-ref", "refs/heads/main", "HEAD")
	moved := gittest.Git(t, path, "rev-parse", "main")
	if _, err := g.Advance(ctx, repo, "cadence/w/a", ""); !errors.Is(err, ErrNotFastForward) {
		t.Fatalf("err = %v", err)
	}
	if gittest.Git(t, path, "rev-parse", "main") != moved {
		t.Error("main was overwritten")
	}
}

// TestParallelIntegrations: eight lots integrating at once into one
// repository all land, none lost, history linear.
func TestParallelIntegrations(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	dirs := map[string]string{}
	for i := 0; i < 8; i++ {
		id := fmt.Sprintf("L%d", i)
		dirs[id] = startLot(t, g, repo, id, map[string]string{id + ".txt": id + "\n"})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for id, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			unlock, err := g.LockIntegration(ctx, repo, "w")
			if err != nil {
				errs <- err
				return
			}
			defer unlock()
			if _, err := g.Rebase(ctx, repo, dir); err != nil {
				errs <- err
				return
			}
			_, err = g.Advance(ctx, repo, "cadence/w/"+id, "")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := gittest.Git(t, path, "rev-list", "--count", "main"); n != "9" {
		t.Errorf("%s commits on main, want 9", n)
	}
	if gittest.Git(t, path, "log", "--merges", "--oneline") != "" {
		t.Error("history not linear")
	}
}

func TestPatchIDSurvivesRebase(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	ctx := context.Background()
	a := startLot(t, g, repo, "a", map[string]string{"a.txt": "a\n"})
	start := gittest.Git(t, a, "rev-parse", "HEAD~1")
	before, err := g.PatchID(ctx, repo, start, gittest.Git(t, a, "rev-parse", "HEAD"))
	if err != nil || before == "" {
		t.Fatal(err)
	}
	gittest.Commit(t, path, "other", map[string]string{"o.txt": "o\n"})
	if _, err := integrate(t, g, repo, "a", a); err != nil {
		t.Fatal(err)
	}
	after, _ := g.PatchID(ctx, repo, "main~1", "main")
	if after != before {
		t.Errorf("patch-id %s before the rebase, %s after", before, after)
	}
}

// TestWorktreeAbortsUnfinishedRebase: a cadence killed in the middle of a
// rebase leaves it in progress; taking the worktree again aborts it, and
// the branch is back where it was.
func TestWorktreeAbortsUnfinishedRebase(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"x.go": "v0\n"})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"x.go": "from a\n"})
	tip := gittest.Git(t, a, "rev-parse", "HEAD")
	gittest.Commit(t, path, "base moves", map[string]string{"x.go": "from base\n"})
	if _, err := gittest.Try(a, "rebase", "main"); err == nil {
		t.Fatal("expected a conflict")
	}
	if _, err := g.Worktree(context.Background(), repo, a, "cadence/w/a", false); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, a, "rev-parse", "HEAD"); got != tip {
		t.Errorf("HEAD %s, want %s", got, tip)
	}
	if tgit().rebaseInProgress(context.Background(), a) {
		t.Error("rebase still in progress")
	}
}

// TestWorktreeRecoversHalfAppliedRebase: killed while a commit was being
// applied, a rebase leaves files in the way of --abort; the worktree is
// recovered from the branch, which still holds the lot's commit.
func TestWorktreeRecoversHalfAppliedRebase(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"x.go": "v0\n"})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"x.go": "from a\n", "new.txt": "new\n"})
	tip := gittest.Git(t, a, "rev-parse", "HEAD")
	gittest.Commit(t, path, "base moves", map[string]string{"x.go": "from base\n"})
	if _, err := gittest.Try(a, "rebase", "main"); err == nil {
		t.Fatal("expected a conflict")
	}
	// What a kill mid-apply leaves: the new file untracked in the way.
	gittest.Git(t, a, "rm", "-q", "--cached", "new.txt")
	if _, err := gittest.Try(a, "rebase", "--abort"); err == nil {
		t.Skip("git aborted anyway; nothing to recover")
	}
	if _, err := g.Worktree(context.Background(), repo, a, "cadence/w/a", false); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, a, "rev-parse", "HEAD"); got != tip || tgit().rebaseInProgress(context.Background(), a) {
		t.Errorf("HEAD %s (want %s), rebase in progress %v", got, tip, tgit().rebaseInProgress(context.Background(), a))
	}
	if st := gittest.Git(t, a, "status", "--porcelain"); st != "" {
		t.Errorf("worktree not clean: %s", st)
	}
}

// TestWorktreeClearsStaleLocks: a git killed by SIGKILL in the lot's
// worktree leaves index.lock (and maybe HEAD.lock and the branch's ref
// lock); taking the worktree again removes them, so the lot's steps work,
// and never touches the lock of the lead's own checkout.
func TestWorktreeClearsStaleLocks(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"x.go": "v0\n"})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"x.go": "from a\n"})
	gitDir := gittest.Git(t, a, "rev-parse", "--absolute-git-dir")
	common := gittest.Git(t, path, "rev-parse", "--absolute-git-dir")
	stale := []string{filepath.Join(gitDir, "index.lock"), filepath.Join(gitDir, "HEAD.lock"),
		filepath.Join(gitDir, "MERGE_MSG.lock"), filepath.Join(common, "refs", "heads", "cadence", "w", "a.lock")}
	lead := filepath.Join(common, "index.lock")
	for _, p := range append(stale, lead) {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := gittest.Try(a, "commit", "-q", "--allow-empty", "-m", "blocked"); err == nil {
		t.Fatal("git committed despite index.lock: the test proves nothing")
	}
	if _, err := g.Worktree(context.Background(), repo, a, "cadence/w/a", false); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(lead); err != nil {
		t.Errorf("the lead's own index.lock was removed: %v", err)
	}
	gittest.Git(t, a, "commit", "-q", "--allow-empty", "-m", "a: works again (a)")
}

// TestWorktreeRetriesStaleBranchLock: a `git worktree add -b` killed with
// cadence can leave the lot branch's ref lock; making the worktree again
// removes that lock (and only the lot's own) and succeeds.
func TestWorktreeRetriesStaleBranchLock(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"x.go": "v0\n"})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	common := gittest.Git(t, path, "rev-parse", "--absolute-git-dir")
	lock := filepath.Join(common, "refs", "heads", "cadence", "w", "b.lock")
	other := filepath.Join(common, "refs", "heads", "main.lock")
	for _, p := range []string{lock, other} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "wt", "b")
	if _, err := g.Worktree(context.Background(), repo, dir, "cadence/w/b", true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Error("the lot branch's stale lock is still there")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the base's lock was removed: %v", err)
	}
	if got := gittest.Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); got != "cadence/w/b" {
		t.Errorf("worktree on %q", got)
	}
}

func TestStaleOwnLock(t *testing.T) {
	dir := t.TempDir()
	gd := filepath.Join(t.TempDir(), "repo", ".git", "worktrees", "b1")
	os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+gd+"\n"), 0o644)
	msg := func(p string) error {
		return fmt.Errorf("fatal: Unable to create '%s': File exists.", p)
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{msg("/r/.git/refs/heads/cadence/w/b.lock"), true},
		{msg("/r/.git/refs/heads/cadence/w/bb.lock"), false},
		{msg("/r/.git/refs/heads/main.lock"), false},
		{msg(filepath.Join(gd, "index.lock")), true},
		{msg(filepath.Join(filepath.Dir(gd), "b", "index.lock")), false},
		{msg("/r/.git/index.lock"), false},
		{fmt.Errorf("fatal: something else"), false},
		{nil, false},
	} {
		if got := staleOwnLock(c.err, dir, "cadence/w/b") != ""; got != c.want {
			t.Errorf("staleOwnLock(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestAdvanceFinishesTheCheckout: cadence's cancel (a Ctrl-C) arriving
// while the lead's checkout of the base is being fast-forwarded does not
// stop git halfway (which left tracked files half updated, and the next
// apply refused the checkout as dirty): the base and the checkout end at
// the lot's tip, clean.
func TestAdvanceFinishesTheCheckout(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n", ".gitattributes": "*.txt filter=slow\n"})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	dir := startLot(t, g, repo, "a", map[string]string{"a.txt": "a1\n", "b.txt": "b1\n"})
	tip := gittest.Git(t, dir, "rev-parse", "HEAD")
	// The smudge filter says when git is checking out, then takes its time.
	mark := filepath.Join(t.TempDir(), "smudging")
	script := filepath.Join(t.TempDir(), "smudge.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ntouch "+mark+"\nsleep 1\ncat\n"), 0o755)
	gittest.Git(t, path, "config", "filter.slow.smudge", script)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for i := 0; i < 6000; i++ {
			if _, err := os.Stat(mark); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	got, err := g.Advance(ctx, repo, "cadence/w/a", "")
	if err != nil {
		t.Fatalf("Advance: %v", err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the filter never ran: the test proves nothing")
	}
	if got != tip || gittest.Git(t, path, "rev-parse", "main") != tip {
		t.Errorf("base at %s, want %s", gittest.Git(t, path, "rev-parse", "main"), tip)
	}
	if st := gittest.Git(t, path, "status", "--porcelain"); st != "" {
		t.Errorf("the lead's checkout is not clean:\n%s", st)
	}
}

// A rebase killed before git wrote its head-name (an empty rebase-merge
// folder in the lot's worktree) is dropped when the worktree is taken
// again, not left for the lead (found by the SIGINT-moments test).
func TestWorktreeDropsRebaseKilledAtItsStart(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, map[string]string{"x.go": "v0\n"})
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"x.go": "from a\n"})
	tip := gittest.Git(t, a, "rev-parse", "HEAD")
	gitDir := gittest.Git(t, a, "rev-parse", "--absolute-git-dir")
	if err := os.Mkdir(filepath.Join(gitDir, "rebase-merge"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !tgit().rebaseInProgress(context.Background(), a) {
		t.Fatal("git does not see the rebase: the test proves nothing")
	}
	if _, err := g.Worktree(context.Background(), repo, a, "cadence/w/a", false); err != nil {
		t.Fatal(err)
	}
	if tgit().rebaseInProgress(context.Background(), a) {
		t.Error("the rebase is still there")
	}
	if got := gittest.Git(t, a, "rev-parse", "HEAD"); got != tip {
		t.Errorf("HEAD = %s, want the lot's tip %s", got, tip)
	}
	if got := gittest.Git(t, a, "symbolic-ref", "HEAD"); got != "refs/heads/cadence/w/a" {
		t.Errorf("HEAD is %s", got)
	}
}

// TestAdvanceOnlyWhatWasTested: Advance with want refuses a branch that is
// no longer at it (ErrBranchMoved), the base untouched.
func TestAdvanceOnlyWhatWasTested(t *testing.T) {
	lotEnv(t)
	path := gittest.NewRepo(t, nil)
	repo := &spec.Repo{Name: "app", Path: path, Base: "main"}
	g := trepos()
	a := startLot(t, g, repo, "a", map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	tested := gittest.Git(t, a, "rev-parse", "HEAD")
	forged := gittest.Commit(t, a, "forged", map[string]string{"evil.txt": "e\n"})
	base := gittest.Git(t, path, "rev-parse", "main")
	if _, err := g.Advance(ctx, repo, "cadence/w/a", tested); !errors.Is(err, ErrBranchMoved) {
		t.Fatalf("Advance to a branch moved to %.12s: %v, want ErrBranchMoved", forged, err)
	}
	if now := gittest.Git(t, path, "rev-parse", "main"); now != base {
		t.Errorf("main moved to %s", now)
	}
	if _, err := g.Advance(ctx, repo, "cadence/w/a", forged); err != nil {
		t.Errorf("Advance to the branch at want: %v", err)
	}
}
