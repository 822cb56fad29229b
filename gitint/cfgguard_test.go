package gitint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// A core.fsmonitor planted in the repository's config is not run by
// cadence's own git calls (safeConfig), while git run without them does.
func TestRunIgnoresPlantedFsmonitor(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a": "1"})
	marker := filepath.Join(t.TempDir(), "marker")
	evil := filepath.Join(t.TempDir(), "evil.sh")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\ntouch '"+marker+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, repo, "config", "core.fsmonitor", evil)
	ctx := context.Background()
	for _, args := range [][]string{{"status", "--porcelain"}, {"diff", "--quiet"}, {"checkout", "-q", "-b", "other"}} {
		if _, err := tgit().Run(ctx, repo, args...); err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("git %v ran the planted core.fsmonitor", args)
		}
	}
	// The check can fail: plain git runs it.
	_, _ = gittest.Try(repo, "status", "--porcelain")
	if _, err := os.Stat(marker); err != nil {
		t.Skip("this git does not run core.fsmonitor from status; nothing to compare")
	}
}

// RestoreConfig keeps a changed config under the lot's rescue folder and
// puts the recorded bytes and mode back; an unchanged config is no change.
func TestRestoreConfig(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a": "1"})
	common := filepath.Join(repo, ".git")
	before, err := ReadConfigFiles(common)
	if err != nil {
		t.Fatal(err)
	}
	if got := RestoreConfig(before, "w", "a"); len(got) != 0 {
		t.Fatalf("unchanged config: %v", got)
	}
	cfg := filepath.Join(common, "config")
	orig, _ := os.ReadFile(cfg)
	gittest.Git(t, repo, "config", "remote.origin.url", "/decoy")
	if err := os.WriteFile(filepath.Join(common, "config.worktree"), []byte("[alias]\n\tst = !evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := RestoreConfig(before, "w", "a")
	if len(got) != 2 {
		t.Fatalf("want 2 changes, got %v", got)
	}
	for _, c := range got {
		if c.Err != nil || c.Kept == "" {
			t.Fatalf("change %v", c)
		}
	}
	if now, _ := os.ReadFile(cfg); string(now) != string(orig) {
		t.Errorf("config not put back:\n%s", now)
	}
	if _, err := os.Stat(filepath.Join(common, "config.worktree")); !os.IsNotExist(err) {
		t.Errorf("config.worktree left: %v", err)
	}
	kept, _ := os.ReadFile(filepath.Join(ConfigRescueDir(common, "w", "a"), "config-1"))
	if !strings.Contains(string(kept), "/decoy") {
		t.Errorf("config-1 does not hold the changed config:\n%s", kept)
	}
}

// An empty config file appearing where none was, or going, is no change:
// Claude Code's sandbox makes such placeholders for the config files it
// protects while another session of the repository runs; a file that
// appears with content, or an existing config emptied, still is.
func TestRestoreConfigPlaceholders(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a": "1"})
	common := filepath.Join(repo, ".git")
	wt := filepath.Join(common, "worktrees", "b")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(common, "worktrees", "b", "config.worktree")
	if err := os.WriteFile(gone, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := ReadConfigFiles(common)
	if err != nil {
		t.Fatal(err)
	}
	placeholder := filepath.Join(common, "config.worktree")
	if err := os.WriteFile(placeholder, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if got := RestoreConfig(before, "w", "a"); len(got) != 0 {
		t.Fatalf("placeholders taken for changes: %v", got)
	}
	if err := os.WriteFile(placeholder, []byte("[core]\n\tfsmonitor = evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(common, "config"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := RestoreConfig(before, "w", "a")
	if len(got) != 2 {
		t.Fatalf("want 2 changes (a placeholder filled, the config emptied), got %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(common, "config")); len(b) == 0 {
		t.Error("the emptied config was not put back")
	}
}

// GuardIntact names a guard whose hook lost cadence's marker.
func TestGuardIntact(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a": "1"})
	ctx := context.Background()
	remove, err := tgit().InstallGuard(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	common, _ := tgit().commonDir(ctx, repo)
	if what := GuardIntact(common); what != "" {
		t.Fatalf("fresh guard: %s", what)
	}
	hook := filepath.Join(common, "cadence", "guard", "hooks", "pre-push")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if what := GuardIntact(common); !strings.Contains(what, "pre-push") {
		t.Fatalf("GuardIntact = %q", what)
	}
	if what, err := tgit().RepairGuard(ctx, repo); err != nil || what == "" {
		t.Fatalf("RepairGuard = %q, %v", what, err)
	}
	if what := GuardIntact(common); what != "" {
		t.Fatalf("repaired guard: %s", what)
	}
}
