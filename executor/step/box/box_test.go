package box_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestBoxStartsWhenOtherRefsGo: the other lots' entries in the lot's ref
// folder may go between Args and the box's start (another lot's commit
// renames its <ref>.lock away; a finished lot's branch is deleted): the
// box still starts, and the lot still commits on its branch in it.
func TestBoxStartsWhenOtherRefsGo(t *testing.T) {
	bwrap, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH"))
	if missing != "" {
		t.Skipf("no step sandbox here: %s", missing)
	}
	root := t.TempDir()
	repo := filepath.Join(root, "app")
	gittest.Git(t, root, "init", "-q", "-b", "main", repo)
	gittest.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	for _, b := range []string{"cadence/w/b", "cadence/w/c"} {
		gittest.Git(t, repo, "branch", b)
	}
	wt := filepath.Join(root, "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "cadence/w/a", wt)
	refs := filepath.Join(repo, ".git", "refs", "heads", "cadence", "w")
	if err := os.WriteFile(filepath.Join(refs, "b.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args, err := box.Args(box.Spec{Worktrees: []string{wt}, Branch: "cadence/w/a", Dir: wt},
		[]string{"/bin/sh", "-c", "git commit -q --allow-empty -m 'a: mine'"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(refs, "b.lock"), filepath.Join(refs, "c")} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, args...)
	cmd.Env = gittest.Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the box did not start or the commit failed: %v\n%s", err, out)
	}
	if got := gittest.Git(t, repo, "log", "-1", "--format=%s", "cadence/w/a"); got != "a: mine" {
		t.Errorf("lot a's branch holds %q", got)
	}
}

// TestStatusTellsASetupFailure: bwrap's status says whether the command
// ran — a box whose setup failed (a bound folder missing) did not, a
// command that failed did.
func TestStatusTellsASetupFailure(t *testing.T) {
	bwrap, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH"))
	if missing != "" {
		t.Skipf("no step sandbox here: %s", missing)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name     string
		writable []string
		want     bool
	}{
		{"setup failed", []string{filepath.Join(dir, "gone")}, false},
		{"command failed", nil, true},
	} {
		args, err := box.Args(box.Spec{Dir: dir, Visible: []string{dir}, Writable: c.writable, Status: true}, []string{"/bin/sh", "-c", "exit 1"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := box.NewStatus()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, bwrap, args...)
		cmd.ExtraFiles = []*os.File{st.Writer()}
		err = cmd.Run()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("%s: %v, want exit 1", c.name, err)
		}
		if got := st.Started(); got != c.want {
			t.Errorf("%s: Started = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPrivateTmpIsBounded: the box's /tmp is a tmpfs of Spec.TmpSize
// bytes; a write beyond it fails (ENOSPC) instead of filling the
// machine's memory.
func TestPrivateTmpIsBounded(t *testing.T) {
	bwrap, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH"))
	if missing != "" {
		t.Skipf("no step sandbox here: %s", missing)
	}
	dir := t.TempDir()
	args, err := box.Args(box.Spec{Dir: dir, Visible: []string{dir}, TmpSize: 1 << 20},
		[]string{"/bin/sh", "-c", "head -c 524288 /dev/zero > /tmp/half && echo half; head -c 2097152 /dev/zero > /tmp/more || echo refused"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bwrap, args...).Output()
	if string(out) != "half\nrefused\n" {
		t.Errorf("a box with a 1 MiB /tmp: %q, want half written and 2 MiB refused", out)
	}
}
