package gitint

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestLocalRemoteTransientPush: a push to a local remote whose ref is
// deleted again leaves the remote's refs as they were, but not its
// folders: LocalRemoteState differs, and RemoteChanges says the remote
// was written to; a push that stays names the ref created. Reading the
// state twice with nothing in between is no change.
func TestLocalRemoteTransientPush(t *testing.T) {
	ctx := context.Background()
	origin := filepath.Join(t.TempDir(), "origin.git")
	gittest.Git(t, filepath.Dir(origin), "init", "-q", "--bare", origin)
	repo := gittest.NewRepo(t, nil)
	gittest.Git(t, repo, "remote", "add", "origin", origin)
	gittest.Git(t, repo, "push", "-q", "origin", "main")
	g := NewGit(gittest.Env())
	s0 := g.LocalRemoteState(ctx, repo)
	if s := g.LocalRemoteState(ctx, repo); s != s0 {
		t.Fatalf("two readings differ with nothing in between:\n%s\n%s", s0, s)
	}
	if !strings.Contains(s0, "refs/heads/main ") {
		t.Fatalf("the state does not hold the local remote's refs:\n%s", s0)
	}
	// Transient: the remote's objects already hold main; only the ref
	// file comes and goes.
	gittest.Git(t, repo, "send-pack", "-q", origin, "main:refs/heads/x")
	gittest.Git(t, repo, "send-pack", "-q", origin, ":refs/heads/x")
	s1 := g.LocalRemoteState(ctx, repo)
	ch := RemoteChanges(s0, s1, 10)
	if len(ch) == 0 || !strings.Contains(strings.Join(ch, "; "), "written to") {
		t.Fatalf("a transient push is not seen: changes %q", ch)
	}
	// A push that stays: new objects and a ref.
	gittest.Commit(t, repo, "new", map[string]string{"n": "1"})
	gittest.Git(t, repo, "send-pack", "-q", origin, "HEAD:refs/heads/sneaky")
	ch = RemoteChanges(s1, g.LocalRemoteState(ctx, repo), 10)
	if !strings.Contains(strings.Join(ch, "; "), "refs/heads/sneaky created at ") {
		t.Fatalf("the pushed ref is not named: changes %q", ch)
	}
}
