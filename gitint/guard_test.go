package gitint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/spec"
)

// withRemote makes a repository with a bare remote "origin" it pushed to.
func withRemote(t *testing.T) (repo, remote string) {
	t.Helper()
	repo = gittest.NewRepo(t, nil)
	remote = filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, repo, "init", "-q", "--bare", remote)
	gittest.Git(t, repo, "remote", "add", "origin", remote)
	gittest.Git(t, repo, "push", "-q", "origin", "main")
	return repo, remote
}

// push runs a push the way an agent might, with the session's environment.
func push(t *testing.T, dir string, env []string, script string) error {
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(gittest.Env(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s: %s", script, out)
	return err
}

// The step environment alone (no guard installed) blocks pushes to the
// repository's remote URLs.
func TestPushGuards(t *testing.T) {
	ctx := context.Background()
	repo, _ := withRemote(t)
	gittest.Commit(t, repo, "local work", map[string]string{"w.txt": "w\n"})
	before := tgit().RemoteState(ctx, repo)
	env := tgit().PushBlockEnv(ctx, []string{repo}, gittest.Env())
	if len(env) == 0 {
		t.Fatal("no push-blocking entries")
	}
	for _, script := range []string{
		"git push origin HEAD:refs/heads/main",
		"git -C . push origin HEAD:refs/heads/b1",
		"bash -c 'git push origin HEAD:refs/heads/b2'",
		"cd . && env git push origin HEAD:refs/heads/b3",
		"git -c core.hooksPath=/dev/null push --no-verify origin HEAD:refs/heads/b4",
	} {
		if err := push(t, repo, env, script); err == nil {
			t.Errorf("%q pushed despite the guard", script)
		}
	}
	if tgit().RemoteState(ctx, repo) != before {
		t.Error("the remote changed")
	}
	if err := push(t, repo, nil, "git push -q origin HEAD:refs/heads/lead"); err != nil {
		t.Errorf("the lead's own push was refused: %v", err)
	}
	if tgit().RemoteState(ctx, repo) == before {
		t.Error("a push the state does not see")
	}
}

// InstallGuard writes nothing of the repository's own: not its hooks
// folder (a relative core.hooksPath is tracked content), not a hook of its
// own, and its config is back byte for byte after the removal. A foreign
// pre-push hook is no reason to refuse the repository.
func TestGuardLeavesTheRepositoryAlone(t *testing.T) {
	ctx := context.Background()
	repo, _ := withRemote(t)
	marks := t.TempDir()
	os.MkdirAll(filepath.Join(repo, ".githooks"), 0o755)
	foreign := foreignHook(marks, "pre-push")
	os.WriteFile(filepath.Join(repo, ".githooks", "pre-push"), []byte(foreign), 0o755)
	gittest.Git(t, repo, "add", ".githooks")
	gittest.Git(t, repo, "commit", "-q", "-m", "hooks")
	gittest.Git(t, repo, "config", "core.hooksPath", ".githooks")
	cfg := filepath.Join(repo, ".git", "config")
	before, _ := os.ReadFile(cfg)
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, repo, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("the checkout changed: %s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".githooks", "pre-push")); string(b) != foreign {
		t.Error("the repository's pre-push hook was changed")
	}
	// The lead's checkout is not guarded: its pushes work, its hooks run.
	if err := push(t, repo, []string{"CADENCE_WAVE=w"}, "git push -q origin HEAD:refs/heads/lead"); err != nil {
		t.Errorf("the lead's push: %v", err)
	}
	if _, err := os.Stat(filepath.Join(marks, "pre-push")); err != nil {
		t.Error("the lead's pre-push hook did not run")
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(cfg); string(after) != string(before) {
		t.Errorf("the config is not back:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	common := filepath.Join(repo, ".git")
	if _, err := os.Stat(layout.RepoGuard(common)); !os.IsNotExist(err) {
		t.Errorf("the guard folder is left: %v", err)
	}
	if tgit().GuardInstalled(ctx, common) {
		t.Error("GuardInstalled after the removal")
	}
}

// A guard a killed cadence left is a leftover for clean (kept while a wave
// holds the repository) and is taken over by the next install; so is a
// pre-push hook of an older cadence.
func TestGuardLeftovers(t *testing.T) {
	ctx := context.Background()
	repo, _ := withRemote(t)
	spec := repoSpec(repo)
	cfg := filepath.Join(repo, ".git", "config")
	before, _ := os.ReadFile(cfg)
	legacy := filepath.Join(repo, ".git", "hooks", "pre-push")
	os.WriteFile(legacy, []byte("#!/bin/sh\n"+HookMarker+"\nexit 1\n"), 0o755)
	if _, err := tgit().InstallGuard(ctx, repo); err != nil { // killed: never removed
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Error("the legacy hook was not taken over")
	}
	if _, err := tgit().InstallGuard(ctx, repo); err != nil { // the next apply
		t.Fatal(err)
	}
	if n := strings.Count(gittest.Git(t, repo, "config", "--list"), "cadence/guard/lots.config"); n != 1 {
		t.Errorf("%d include entries", n)
	}
	lefts, err := tgit().Leftovers(ctx, spec, "w", "cadence/w", func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	var guard *Leftover
	for i, l := range lefts {
		if l.Kind == "guard" {
			guard = &lefts[i]
		}
	}
	if guard == nil || guard.Keep != "" {
		t.Fatalf("leftovers = %+v", lefts)
	}
	// While a wave holds the repository, its guard stays.
	common := filepath.Dir(filepath.Dir(guard.Path))
	release, err := holdRepo(common, "other")
	if err != nil {
		t.Fatal(err)
	}
	if err := trepos().RemoveLeftover(ctx, spec, *guard); err == nil {
		t.Error("removed the guard of a running wave")
	}
	lefts, _ = tgit().Leftovers(ctx, spec, "w", "cadence/w", func(string) bool { return false })
	if len(lefts) == 0 || !strings.Contains(lefts[len(lefts)-1].Keep, "used by a running wave") {
		t.Errorf("leftovers while held = %+v", lefts)
	}
	release()
	if err := trepos().RemoveLeftover(ctx, spec, *guard); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(cfg); string(after) != string(before) {
		t.Errorf("the config is not back:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if lefts, _ := tgit().Leftovers(ctx, spec, "w", "cadence/w", func(string) bool { return false }); len(lefts) != 0 {
		t.Errorf("leftovers after clean = %+v", lefts)
	}
}

// Lots of a repository start at once: every worktree gets its entry, and
// each sees its own branch.
func TestGuardWorktreeConcurrent(t *testing.T) {
	ctx := context.Background()
	repo, _ := withRemote(t)
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	g := trepos()
	const n = 6
	dirs := make([]string, n)
	root := t.TempDir()
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprintf("l%d", i))
		if _, err := g.Worktree(ctx, repoSpec(repo), dirs[i], fmt.Sprintf("cadence/w/l%d", i), true); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range dirs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = g.GuardWorktree(ctx, repoSpec(repo), dirs[i], fmt.Sprintf("cadence/w/l%d", i))
		}(i)
	}
	wg.Wait()
	for i, d := range dirs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if got := gittest.Git(t, d, "config", "cadence.branch"); got != fmt.Sprintf("cadence/w/l%d", i) {
			t.Errorf("%s: cadence.branch = %q", d, got)
		}
	}
	if got, _ := gittest.Try(repo, "config", "--get", "cadence.branch"); got != "" {
		t.Errorf("the lead's checkout has cadence.branch %q", got)
	}
	// A worktree that is gone loses its entry at the next write; one made
	// later, with the same id, is not guarded by the old entry.
	if err := g.RemoveWorktree(ctx, repoSpec(repo), dirs[0]); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(t.TempDir(), "l0")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "mine", mine)
	gittest.Commit(t, mine, "the lead's", map[string]string{"m": "m\n"})
	if got, _ := gittest.Try(mine, "config", "--get", "cadence.branch"); got != "" {
		t.Errorf("the lead's new worktree has cadence.branch %q", got)
	}
	// A worktree whose folder was deleted loses its entry at the next write.
	os.RemoveAll(dirs[2])
	gittest.Git(t, repo, "worktree", "unlock", dirs[2])
	gittest.Git(t, repo, "worktree", "prune")
	if err := g.GuardWorktree(ctx, repoSpec(repo), dirs[1], "cadence/w/l1"); err != nil {
		t.Fatal(err)
	}
	lots, _ := os.ReadFile(filepath.Join(repo, ".git", "cadence", "guard", "lots.config"))
	if strings.Contains(string(lots), "/worktrees/l0\"") || strings.Contains(string(lots), "/worktrees/l2\"") || strings.Count(string(lots), "[includeIf") != n-2 {
		t.Errorf("lots.config:\n%s", lots)
	}
}

// Paths with quotes, spaces and glob characters are written and matched
// exactly.
func TestGuardOddPaths(t *testing.T) {
	ctx := context.Background()
	parent := filepath.Join(t.TempDir(), `we"ird [x]* it's`)
	os.MkdirAll(parent, 0o755)
	repo := filepath.Join(parent, "repo")
	gittest.Git(t, parent, "init", "-q", "-b", "main", repo)
	gittest.Commit(t, repo, "init", map[string]string{"a": "a\n"})
	remote := filepath.Join(parent, "origin.git")
	gittest.Git(t, repo, "init", "-q", "--bare", remote)
	gittest.Git(t, repo, "remote", "add", "origin", remote)
	gittest.Git(t, repo, "checkout", "-q", "-b", "lead")
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	wt := filepath.Join(parent, "wt [1]")
	if _, err := trepos().Worktree(ctx, repoSpec(repo), wt, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	if err := GuardWorktree(ctx, repo, wt, "cadence/w/a"); err != nil {
		t.Fatal(err)
	}
	env := append(gittest.Env(), "CADENCE_WAVE=w")
	for _, script := range []string{"git push origin HEAD:refs/heads/x", "git update-ref refs/heads/main HEAD"} {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir, cmd.Env = wt, env
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "cadence") {
			t.Errorf("%s: %v\n%s", script, err, out)
		}
	}
	gittest.Commit(t, wt, "lot", map[string]string{"b": "b\n"})
}

func TestPushBlockEnvContinuesUserConfig(t *testing.T) {
	repo, _ := withRemote(t)
	env := tgit().PushBlockEnv(context.Background(), []string{repo}, []string{"PATH=/bin", "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=c"})
	got := strings.Join(env, " ")
	if !strings.Contains(got, "GIT_CONFIG_KEY_2=url.cadence-no-push::") || strings.Contains(got, "GIT_CONFIG_KEY_0=") || strings.Contains(got, "PATH=") {
		t.Errorf("env = %v", env)
	}
	remove, err := tgit().InstallGuard(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	env = tgit().PushBlockEnv(context.Background(), []string{repo}, []string{"PATH=/bin"})
	got = strings.Join(env, " ")
	for _, want := range []string{"GIT_CONFIG_KEY_0=url.cadence-no-push::", "/cadence/guard/repo.config", "protocol.ext.allow", "PATH=" + filepath.Join(repo, ".git", "cadence", "guard", "bin") + ":/bin"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %v", want, env)
		}
	}
}

// A push URL of the repository's own is pushed to besides the ones git
// derives, so cadence rewrites it too.
func TestGuardRewritesOwnPushURL(t *testing.T) {
	ctx := context.Background()
	repo, remote := withRemote(t)
	other := filepath.Join(t.TempDir(), "push.git")
	gittest.Git(t, repo, "init", "-q", "--bare", other)
	gittest.Git(t, repo, "config", "remote.origin.pushurl", other)
	gittest.Git(t, repo, "checkout", "-q", "-b", "lead")
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	wt := filepath.Join(t.TempDir(), "a")
	if _, err := trepos().Worktree(ctx, repoSpec(repo), wt, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	if err := GuardWorktree(ctx, repo, wt, "cadence/w/a"); err != nil {
		t.Fatal(err)
	}
	if err := push(t, wt, nil, "git -c core.hooksPath=/dev/null push origin HEAD:refs/heads/x"); err == nil {
		t.Error("pushed")
	}
	if got := gittest.Git(t, other, "for-each-ref"); got != "" {
		t.Errorf("the push URL got %s", got)
	}
	if err := push(t, wt, nil, "git fetch -q origin"); err != nil {
		t.Error("fetch from the remote failed")
	}
	_ = remote
}

func TestURLVariants(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"https://example.com/a/b.git", []string{"https://example.com/a/b.git"}},
		{"git@example.com:a/b.git", []string{"git@example.com:a/b.git"}},
		{"ssh://git@example.com/a/b.git", []string{"ssh://git@example.com/a/b.git"}},
		{"/srv/git/b.git", []string{"/srv/git/b.git", "/srv/git/b.git", "file:///srv/git/b.git"}},
		{"../b.git", []string{"/work/b.git", "file:///work/b.git"}},
		{"file:///srv/git/b.git", []string{"file:///srv/git/b.git", "/srv/git/b.git", "file:///srv/git/b.git"}},
		{"./a:b", []string{"/work/repo/a:b", "file:///work/repo/a:b"}},
	} {
		if got := urlVariants("/work/repo", tc.url); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestGuardWorktreeNeedsTheGuard(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, nil)
	wt := filepath.Join(t.TempDir(), "a")
	if _, err := trepos().Worktree(ctx, repoSpec(repo), wt, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	if err := GuardWorktree(ctx, repo, wt, "cadence/w/a"); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("err = %v", err)
	}
	if err := GuardWorktree(ctx, repo, repo, "cadence/w/a"); err == nil || !strings.Contains(err.Error(), "not a linked worktree") {
		t.Errorf("err = %v", err)
	}
}

// A step's git, with the guard environment, writes no commit-graph and
// starts no detached gc or maintenance (the step's tree ends with the
// step; a gc killed halfway leaves gc.log.lock in the repository).
func TestPushBlockEnvNoHousekeeping(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a": "1"})
	gittest.Git(t, repo, "remote", "add", "origin", t.TempDir())
	env := append(gittest.Env(), tgit().PushBlockEnv(context.Background(), []string{repo}, gittest.Env())...)
	for key, want := range map[string]string{"gc.auto": "0", "maintenance.auto": "false", "gc.writeCommitGraph": "false", "fetch.writeCommitGraph": "false"} {
		cmd := exec.Command("git", "config", "--get", key)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q", key, got, err, want)
		}
	}
}

// TestGuardWorktreeOfTheLongestName: a lot worktree whose git id is as long
// as a lot id validate accepts, with the number git appends to a taken id
// (spec.NameMax - spec.NameReserve bytes, plus 5 digits), is guarded: its
// entry <guard>/worktrees/<id>.config fits in a file name.
func TestGuardWorktreeOfTheLongestName(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, nil)
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	id := "L" + strings.Repeat("x", spec.NameMax-spec.NameReserve-1) + "12345"
	wt := filepath.Join(t.TempDir(), id)
	if _, err := trepos().Worktree(ctx, repoSpec(repo), wt, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	if err := GuardWorktree(ctx, repo, wt, "cadence/w/a"); err != nil {
		t.Errorf("GuardWorktree: %v", err)
	}
}
