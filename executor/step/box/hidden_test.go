package box_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestHiddenPathsUnreadable: a file and a folder the box hides (a
// worker's credentials, another run's folder) read as empty in the box,
// though they are inside a visible folder, while a worktree inside the
// hidden folder (the step's own run) is still there and writable.
func TestHiddenPathsUnreadable(t *testing.T) {
	bwrap, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH"))
	if missing != "" {
		t.Skipf("no step sandbox here: %s", missing)
	}
	home := t.TempDir()
	seed := filepath.Join(home, "worker-team.nk")
	runs := filepath.Join(home, "runs")
	other := filepath.Join(runs, "other", "secret.txt")
	for f, body := range map[string]string{seed: "SUSEED\n", other: "other run\n"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	repo := gittest.NewRepo(t, map[string]string{"README.md": "# r\n"})
	own := filepath.Join(runs, "own")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "lot", own, "main")
	args, err := box.Args(box.Spec{Dir: own, Branch: "lot", Worktrees: []string{own}, Visible: []string{home, repo}, Hidden: []string{seed, runs}},
		[]string{"/bin/sh", "-c", "cat " + seed + " " + other + " 2>/dev/null; echo made > " + filepath.Join(own, "made.txt") + " && echo wrote"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bwrap, args...).CombinedOutput()
	if string(out) != "wrote\n" {
		t.Errorf("the box printed %q (%v), want only \"wrote\": the hidden file and folder unreadable, its own worktree writable", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(own, "made.txt")); string(b) != "made\n" {
		t.Errorf("the step's own worktree inside the hidden folder was not written: %q", b)
	}
}
