//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// TestE2EKill9SandboxedBash: cadence killed with SIGKILL while a
// sandboxed Bash call runs leaves the sandbox's placeholders in the lot's
// worktree and an empty config.lock in the repository's git dir. The next
// apply removes them before it looks at the lot: the interrupted
// implement step is replayed, the lot ends done (no hand-back over
// "uncommitted changes"), and `cadence clean -dry-run=false` succeeds with
// no config.lock left.
func TestE2EKill9SandboxedBash(t *testing.T) {
	t.Parallel()
	e := killDuringBash(t)
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`, `removed what a killed agent session left in repo app: .*\.git/config\.lock`)
	a := e.lot(e.state(), "a")
	if a.Status != state.LotDone {
		t.Fatalf("lot a %s (%s), steps %s", a.Status, a.Cause, steps(a))
	}
	if got := e.git(e.repo, "show", "main:f.txt"); got != "f" {
		t.Errorf("main:f.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(e.repo, ".git", "config.lock")); err == nil {
		t.Error(".git/config.lock is left after the apply")
	}
	c := e.cadence("clean", "-dry-run=false", "-no-color", e.wave)
	c.wantCode(t, 0)
	e.wantTidy()
}

// TestE2EKill9SandboxedBashClean: `cadence clean -dry-run=false` right
// after the kill removes the placeholders and the guard, keeps the
// worktree and the branch of the lot (a plain apply resumes it), and
// exits 0.
func TestE2EKill9SandboxedBashClean(t *testing.T) {
	t.Parallel()
	e := killDuringBash(t)
	c := e.cadence("clean", "-dry-run=false", "-no-color", e.wave)
	c.wantCode(t, 0)
	c.wantOut(t, `removed app placeholder \.git/config\.lock`, `removed +\S* ?placeholder \S*/\.bashrc`, `removed app guard`,
		`keep    app worktree \S+: the lot can be resumed; cadence apply goes on`, `keep    app branch cadence/w/a: the lot can be resumed`)
	e.wantTidy()
}

// killDuringBash starts an apply whose implement session runs a Bash call
// that waits (for a file that never comes, 2 minutes at most), kills
// cadence with SIGKILL once the sandbox's placeholders are in the lot's
// worktree and the repository's git dir, and checks they were left.
func killDuringBash(t *testing.T) *e2e {
	needSandbox(t)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0":   {fakeapi.Bash("for i in $(seq 1 1200); do [ -e never ] && break; sleep 0.1; done"), writeDone("waited")},
		"a-implement0~2": implementScript(),
		"a-review0":      {review("conform")},
	}, waveOpts{})
	p, session := e.startUntilTurn("a-implement0", 1)
	var wt string
	placed := testutil.Eventually(time.Minute, func() bool {
		st, _, err := state.Read(state.PathFor(e.wave))
		if err != nil || st.Lots["a"] == nil || st.Lots["a"].Worktree == "" {
			return false
		}
		wt = st.Lots["a"].Worktree
		_, err1 := os.Stat(filepath.Join(wt, ".bashrc"))
		_, err2 := os.Stat(filepath.Join(e.repo, ".git", "config.lock"))
		return err1 == nil && err2 == nil
	})
	p.signal(syscall.SIGKILL)
	<-p.done
	if !placed {
		t.Fatal("the sandbox's placeholders never showed up in the worktree and the git dir")
	}
	e.noneLeft(session)
	left := e.git(wt, "status", "--porcelain", "--untracked-files=all")
	t.Logf("left in the worktree after kill -9:\n%s", left)
	if !strings.Contains(left, ".bashrc") {
		t.Fatalf("the kill left no placeholder in the worktree: the test does not test what it says")
	}
	return e
}

// wantTidy checks that nothing of the wave is left in the repository: no
// config.lock, no guard's includeIf entry.
func (e *e2e) wantTidy() {
	e.t.Helper()
	if _, err := os.Stat(filepath.Join(e.repo, ".git", "config.lock")); err == nil {
		e.t.Error(".git/config.lock is left after clean")
	}
	if cfg := e.git(e.repo, "config", "--list", "--local"); strings.Contains(cfg, "includeif") {
		e.t.Errorf("the guard's includeIf entry is left:\n%s", cfg)
	}
}
