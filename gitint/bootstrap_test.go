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

// submoduleRepo makes a repository whose base has the submodule
// vendor/lib, itself with the submodule inner, both checked out in the
// lead's checkout; their URLs in .gitmodules are then made unreachable,
// as a remote's would be, so that only the lead's local copies serve.
func submoduleRepo(t *testing.T) string {
	t.Helper()
	file := []string{"-c", "protocol.file.allow=always"}
	inner := gittest.NewRepo(t, map[string]string{"inner.txt": "inner\n"})
	lib := gittest.NewRepo(t, map[string]string{"lib.txt": "lib\n"})
	gittest.Git(t, lib, append(file, "submodule", "add", "-q", inner, "inner")...)
	gittest.Git(t, lib, "commit", "-q", "-m", "inner")
	app := gittest.NewRepo(t, map[string]string{"app.txt": "app\n"})
	gittest.Git(t, app, append(file, "submodule", "add", "-q", lib, "vendor/lib")...)
	gittest.Git(t, app, append(file, "submodule", "update", "--init", "--recursive")...)
	gittest.Git(t, app, "config", "-f", ".gitmodules", "submodule.vendor/lib.url", "https://example.invalid/lib.git")
	gittest.Git(t, app, "commit", "-q", "-a", "-m", "vendor/lib")
	return app
}

func TestCheckoutSubmodules(t *testing.T) {
	ctx := context.Background()
	app := submoduleRepo(t)
	repo := &spec.Repo{Name: "app", Path: app, Base: "main"}
	cfgBefore, err := os.ReadFile(filepath.Join(app, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	g := trepos()
	dir := filepath.Join(t.TempDir(), "wt")
	if _, err := g.Worktree(ctx, repo, dir, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	if err := tgit().CheckoutSubmodules(ctx, repo, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"vendor/lib/lib.txt", "vendor/lib/inner/inner.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not checked out: %v", f, err)
		}
	}
	if st := gittest.Git(t, dir, "status", "--porcelain", "--ignore-submodules=none", "--untracked-files=all"); st != "" {
		t.Errorf("worktree not clean after the checkout:\n%s", st)
	}
	if after, _ := os.ReadFile(filepath.Join(app, ".git", "config")); string(after) != string(cfgBefore) {
		t.Errorf("the lead's .git/config changed:\n%s\nwas\n%s", after, cfgBefore)
	}
	// Checked out again (a resumed bootstrap): nothing to do, no error.
	if err := tgit().CheckoutSubmodules(ctx, repo, dir); err != nil {
		t.Fatal(err)
	}
	// A commit made in the lot's submodule exists nowhere else: the
	// worktree is kept.
	gittest.Commit(t, filepath.Join(dir, "vendor/lib"), "lot's own", map[string]string{"new.txt": "x\n"})
	gittest.Git(t, dir, "commit", "-q", "-a", "-m", "bump vendor/lib")
	if err := g.RemoveWorktree(ctx, repo, dir); err == nil || !strings.Contains(err.Error(), "lacks") {
		t.Fatalf("RemoveWorktree with a lot's own submodule commit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "vendor/lib/new.txt")); err != nil {
		t.Fatalf("the worktree was not kept: %v", err)
	}
	// Once the lead's copy has that commit, the worktree goes.
	gittest.Git(t, filepath.Join(app, "vendor/lib"), "fetch", "-q", filepath.Join(dir, "vendor/lib"), "HEAD")
	if err := g.RemoveWorktree(ctx, repo, dir); err != nil {
		t.Fatalf("RemoveWorktree of a worktree with submodules: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("worktree still there: %v", err)
	}
}

// TestCheckoutSubmodulesNoLocalCopy: a submodule the lead never checked
// out is an error naming it; nothing is fetched from its URL.
func TestCheckoutSubmodulesNoLocalCopy(t *testing.T) {
	ctx := context.Background()
	app := submoduleRepo(t)
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Git(t, app, "clone", "-q", app, clone) // submodules not initialised
	repo := &spec.Repo{Name: "app", Path: clone, Base: "main"}
	dir := filepath.Join(t.TempDir(), "wt")
	if _, err := trepos().Worktree(ctx, repo, dir, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	err := tgit().CheckoutSubmodules(ctx, repo, dir)
	if err == nil || !strings.Contains(err.Error(), "submodule vendor/lib has no local copy") {
		t.Fatalf("CheckoutSubmodules = %v", err)
	}
}

func TestCheckCopy(t *testing.T) {
	ctx := context.Background()
	app := gittest.NewRepo(t, map[string]string{"tracked.local": "t\n"})
	gittest.Commit(t, app, "ignore", map[string]string{".gitignore": "*.local\n.env\nbig\nlink\n"})
	write := func(name string, size int) {
		if err := os.WriteFile(filepath.Join(app, name), []byte(strings.Repeat("x", size)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(".env", 10)
	write("plain.txt", 10)
	write("big", spec.MaxCopyBytes+1)
	if err := os.Symlink(".env", filepath.Join(app, "link")); err != nil {
		t.Fatal(err)
	}
	got, err := tgit().CheckCopy(ctx, app, "main", []string{".env", "tracked.local", "missing.local", "plain.txt", "big", "link"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"tracked.local": "is tracked in the base main",
		"missing.local": "is not in the repository's folder",
		"plain.txt":     "is not ignored by git",
		"big":           "bytes, more than copy takes",
		"link":          "is a symbolic link",
	}
	seen := map[string]bool{}
	for _, p := range got {
		seen[p.Path] = true
		if !strings.Contains(p.Problem, want[p.Path]) || want[p.Path] == "" {
			t.Errorf("%s: %q, want it to say %q", p.Path, p.Problem, want[p.Path])
		}
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("%s not refused", p)
		}
	}
}

func TestCopyIn(t *testing.T) {
	ctx := context.Background()
	app := gittest.NewRepo(t, map[string]string{".gitignore": ".env\nconfig/local.yml\n"})
	for name, content := range map[string]string{".env": "A=1\n", "config/local.yml": "k: v\n", "other": "o\n"} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(app, name)), 0o755)
		if err := os.WriteFile(filepath.Join(app, name), []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	repo := &spec.Repo{Name: "app", Path: app, Base: "main"}
	dir := filepath.Join(t.TempDir(), "wt")
	if _, err := trepos().Worktree(ctx, repo, dir, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	if err := tgit().CopyIn(ctx, repo, dir, []string{".env", "config/local.yml"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "config/local.yml"))
	if err != nil || string(b) != "k: v\n" {
		t.Fatalf("config/local.yml = %q, %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, ".env")); st == nil || st.Mode().Perm() != 0o640 {
		t.Errorf(".env mode %v", st)
	}
	if st := gittest.Git(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("copies show in git status:\n%s", st)
	}
	// A file the worktree has already is left as it is.
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("lot's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tgit().CopyIn(ctx, repo, dir, []string{".env"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".env")); string(b) != "lot's\n" {
		t.Errorf(".env overwritten: %q", b)
	}
	// One git does not ignore there is refused and not left behind.
	err = tgit().CopyIn(ctx, repo, dir, []string{"other"})
	if err == nil || !strings.Contains(err.Error(), "does not ignore it") {
		t.Fatalf("CopyIn of an unignored file = %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "other")); !os.IsNotExist(serr) {
		t.Errorf("unignored copy left in the worktree: %v", serr)
	}
}
