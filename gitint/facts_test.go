package gitint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// newRepo makes a throwaway repository on main with one commit.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(Env(os.Environ()), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644)
	run("add", ".")
	run("commit", "-qm", "init")
	return dir
}

func TestInspect(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	f, err := tgit().Inspect(ctx, dir, "main")
	if err != nil || !f.Exists || !f.IsGit || len(f.BaseSHA) != 40 || len(f.Dirty) != 0 || f.ForeignPrePush != "" {
		t.Fatalf("clean repo: %+v %v", f, err)
	}
	if f, _ := tgit().Inspect(ctx, dir, "trunk"); f.BaseSHA != "" {
		t.Errorf("missing base found: %q", f.BaseSHA)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644)
	os.Remove(filepath.Join(dir, "b.txt"))
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("untracked\n"), 0o644)
	if f, _ := tgit().Inspect(ctx, dir, "main"); !reflect.DeepEqual(f.Dirty, []string{"a.txt", "b.txt"}) {
		t.Errorf("dirty = %v", f.Dirty)
	}
	hook := filepath.Join(dir, ".git", "hooks", "pre-push")
	os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	if f, _ := tgit().Inspect(ctx, dir, "main"); f.ForeignPrePush != hook {
		t.Errorf("foreign hook = %q", f.ForeignPrePush)
	}
	os.WriteFile(hook, []byte("#!/bin/sh\n"+HookMarker+"\nexit 1\n"), 0o755)
	if f, _ := tgit().Inspect(ctx, dir, "main"); f.ForeignPrePush != "" {
		t.Errorf("own hook reported foreign: %q", f.ForeignPrePush)
	}
	// core.hooksPath is honoured
	os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
	os.WriteFile(filepath.Join(dir, "hooks", "pre-push"), []byte("#!/bin/sh\n"), 0o755)
	exec.Command("git", "-C", dir, "config", "core.hooksPath", "hooks").Run()
	if f, _ := tgit().Inspect(ctx, dir, "main"); f.ForeignPrePush != filepath.Join(dir, "hooks", "pre-push") {
		t.Errorf("hooksPath hook = %q", f.ForeignPrePush)
	}
}

func TestInspectNotRepo(t *testing.T) {
	ctx := context.Background()
	if f, err := tgit().Inspect(ctx, filepath.Join(t.TempDir(), "nope"), "main"); err != nil || f.Exists {
		t.Errorf("missing: %+v %v", f, err)
	}
	plain := t.TempDir()
	if f, err := tgit().Inspect(ctx, plain, "main"); err != nil || !f.Exists || f.IsGit {
		t.Errorf("plain folder: %+v %v", f, err)
	}
	sub := filepath.Join(newRepo(t), "sub")
	os.Mkdir(sub, 0o755)
	if _, err := tgit().Inspect(ctx, sub, "main"); err == nil {
		t.Error("a subfolder of a repository was taken for the repository")
	}
}

func TestRunError(t *testing.T) {
	_, err := tgit().Run(context.Background(), t.TempDir(), "rev-parse", "--verify", "nope")
	ge, ok := err.(*Error)
	if !ok || ge.ExitCode == 0 || ge.Stderr == "" {
		t.Fatalf("err = %#v", err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOnBase: the base's commit and its ancestors are on it; a commit of
// another branch only, or one the repository lacks, is not; a missing base
// is an error.
func TestOnBase(t *testing.T) {
	dir := newRepo(t)
	g := NewGit(Env(os.Environ()))
	run := func(args ...string) string {
		t.Helper()
		out, err := g.Run(context.Background(), dir, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	first := run("rev-parse", "HEAD")
	run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "two")
	second := run("rev-parse", "HEAD")
	run("checkout", "-q", "-b", "side", first)
	run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "side")
	side := run("rev-parse", "HEAD")
	for _, tc := range []struct {
		commit string
		want   bool
	}{{first, true}, {second, true}, {side, false}, {strings.Repeat("e", 40), false}} {
		got, err := g.OnBase(context.Background(), dir, "main", tc.commit)
		if err != nil || got != tc.want {
			t.Errorf("OnBase(%.12s) = %v, %v; want %v", tc.commit, got, err, tc.want)
		}
	}
	if _, err := g.OnBase(context.Background(), dir, "nope", first); err == nil {
		t.Error("a missing base is no error")
	}
}
