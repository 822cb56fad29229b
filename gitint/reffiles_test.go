package gitint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// forEachRef is what git says of the refs under prefixes, as SnapshotRefs
// used to read them.
func forEachRef(t *testing.T, repo string, prefixes ...string) Refs {
	t.Helper()
	out := gittest.Git(t, repo, append([]string{"for-each-ref", "--format=%(objectname) %(refname) %(symref)"}, prefixes...)...)
	return parseRefs(out, "")
}

// TestSnapshotFilesMatchesGit: the ref files read as `git for-each-ref`
// does, whatever mix of loose and packed refs, annotated tags, symbolic
// refs and ref locks the repository has.
func TestSnapshotFilesMatchesGit(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	first := gittest.Git(t, repo, "rev-parse", "HEAD")
	gittest.Git(t, repo, "branch", "cadence/w/a")
	gittest.Git(t, repo, "tag", "light")
	gittest.Git(t, repo, "tag", "-a", "-m", "annotated", "v1")
	steps := []struct {
		name string
		do   func()
	}{
		{"loose", func() {}},
		{"packed", func() { gittest.Git(t, repo, "pack-refs", "--all") }},
		{"packed, then moved loose", func() {
			gittest.Commit(t, repo, "b", map[string]string{"b.txt": "b\n"})
			gittest.Git(t, repo, "branch", "-f", "cadence/w/a", "HEAD")
		}},
		{"a packed ref deleted", func() { gittest.Git(t, repo, "tag", "-d", "light") }},
		{"a packed annotated tag moved loose", func() { gittest.Git(t, repo, "tag", "-f", "-a", "-m", "again", "v1", first) }},
		{"a symbolic ref under refs/heads", func() {
			gittest.Git(t, repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
		}},
		{"a ref being written (its lock file)", func() {
			if err := os.WriteFile(filepath.Join(repo, ".git", "refs", "heads", "main.lock"), []byte(first+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, s := range steps {
		s.do()
		got, err := snapshotFiles(repo, GuardedRefs)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if want := forEachRef(t, repo, GuardedRefs...); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the files say\n%v\ngit says\n%v", s.name, got, want)
		}
		// SnapshotRefs (the executor's reading) agrees, skip applied.
		snap, err := tgit().SnapshotRefs(context.Background(), repo, "refs/heads/cadence/")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := snap["refs/heads/cadence/w/a"]; ok || snap["refs/heads/main"] == "" {
			t.Errorf("%s: SnapshotRefs skipping refs/heads/cadence/: %v", s.name, snap)
		}
	}
}

// TestRefFilesAskGit: what the readers do not read for certain is left to
// git (errAskGit), and the callers then ask it.
func TestRefFilesAskGit(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	heads := filepath.Join(repo, ".git", "refs", "heads")
	if err := os.WriteFile(filepath.Join(heads, "broken"), []byte("not a hash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshotFiles(repo, GuardedRefs); !errors.Is(err, errAskGit) {
		t.Errorf("a broken ref file: %v, want errAskGit", err)
	}
	if _, err := resolveRef(filepath.Join(repo, ".git"), "refs/heads/broken"); !errors.Is(err, errAskGit) {
		t.Errorf("resolve a broken ref file: %v, want errAskGit", err)
	}
	// SnapshotRefs falls back on git, which leaves the broken ref out.
	snap, err := tgit().SnapshotRefs(context.Background(), repo, "")
	if err != nil || snap["refs/heads/main"] == "" {
		t.Errorf("SnapshotRefs with a broken ref: %v %v", snap, err)
	}
	if err := os.Remove(filepath.Join(heads, "broken")); err != nil {
		t.Fatal(err)
	}
	// A reftable repository: never read from files.
	if err := os.Mkdir(filepath.Join(repo, ".git", "reftable"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshotFiles(repo, GuardedRefs); !errors.Is(err, errAskGit) {
		t.Errorf("reftable: %v, want errAskGit", err)
	}
	if _, err := branchOf(repo, "main"); !errors.Is(err, errAskGit) {
		t.Errorf("reftable branchOf: %v, want errAskGit", err)
	}
	// Not a repository at all.
	if _, err := headOf(t.TempDir()); !errors.Is(err, errAskGit) {
		t.Errorf("headOf outside a repository: %v, want errAskGit", err)
	}
}

// TestHeadAndBranchFromFiles: a linked worktree's HEAD (on a branch, loose
// or packed, and detached) and a branch's commit read from the files are
// git's, and a missing branch is "".
func TestHeadAndBranchFromFiles(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "cadence/w/a", wt)
	gittest.Commit(t, wt, "in the worktree", map[string]string{"w.txt": "w\n"})
	check := func(what string) {
		t.Helper()
		got, err := headOf(wt)
		if want := gittest.Git(t, wt, "rev-parse", "HEAD"); err != nil || got != want {
			t.Errorf("%s: headOf = %q, %v; git says %s", what, got, err, want)
		}
		g := trepos()
		if got, err := g.Head(context.Background(), wt); err != nil || got != gittest.Git(t, wt, "rev-parse", "HEAD") {
			t.Errorf("%s: Head = %q, %v", what, got, err)
		}
		for _, b := range []string{"main", "cadence/w/a"} {
			got, err := branchOf(repo, b)
			if want := gittest.Git(t, repo, "rev-parse", "refs/heads/"+b); err != nil || got != want {
				t.Errorf("%s: branchOf(%s) = %q, %v; git says %s", what, b, got, err, want)
			}
		}
		if got, err := branchOf(repo, "cadence/w/none"); err != nil || got != "" {
			t.Errorf("%s: a missing branch: %q, %v", what, got, err)
		}
	}
	check("loose")
	gittest.Git(t, repo, "pack-refs", "--all")
	check("packed")
	gittest.Git(t, wt, "checkout", "-q", "--detach", "HEAD~1")
	check("detached")
}

func TestParseStatusV2(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      StatusV2
	}{
		{"clean on main", "# branch.oid 0123\x00# branch.head main\x00", StatusV2{Head: "refs/heads/main", OID: "0123"}},
		{"detached", "# branch.oid 0123\x00# branch.head (detached)\x00", StatusV2{OID: "0123"}},
		{"changes", "# branch.oid 01\x00# branch.head main\x00" +
			"1 .M N... 100644 100644 100644 aa bb a file.txt\x00" +
			"2 R. N... 100644 100644 100644 aa bb R100 new name\x00old name\x00" +
			"u UU N... 100644 100644 100644 100644 aa bb cc both.txt\x00",
			StatusV2{Head: "refs/heads/main", OID: "01", Changed: []string{"a file.txt", "new name", "both.txt"}}},
		{"untracked and ignored", "# branch.oid 01\x00# branch.head main\x00? new file\x00! build/out\x00",
			StatusV2{Head: "refs/heads/main", OID: "01", Untracked: []string{"new file", "build/out"}}},
	} {
		if got := ParseStatusV2(c.out); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRemotesOfConfig(t *testing.T) {
	cfg := "remote.origin.url\nhttps://example.com/a.git\x00remote.origin.fetch\n+refs/heads/*:refs/remotes/origin/*\x00" +
		"remote.my.fork.pushurl\n/srv/fork\x00remote.nourl.fetch\nx\x00remote.pushdefault\norigin\x00"
	urls, names := remotesOfConfig(cfg)
	if want := "remote.origin.url https://example.com/a.git\nremote.my.fork.pushurl /srv/fork\n"; urls != want {
		t.Errorf("urls %q, want %q", urls, want)
	}
	if want := []string{"origin", "my.fork", "nourl"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
}

// TestRemoteStateNames: the remotes RemoteState compares are `git remote`'s.
func TestRemoteStateNames(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	other := gittest.NewRepo(t, map[string]string{"b.txt": "b\n"})
	gittest.Git(t, repo, "remote", "add", "up.stream", other)
	gittest.Git(t, repo, "fetch", "-q", "up.stream")
	st := tgit().RemoteState(context.Background(), repo)
	for _, want := range []string{"remote.up.stream.url " + other, "refs/remotes/up.stream/main ", "remote up.stream:\n"} {
		if !strings.Contains(st, want) {
			t.Errorf("RemoteState lacks %q:\n%s", want, st)
		}
	}
	before := st
	gittest.Commit(t, other, "pushed", map[string]string{"c.txt": "c\n"})
	if tgit().RemoteState(context.Background(), repo) == before {
		t.Error("a change of the remote's refs did not change the state")
	}
}

// TestLockOf: a lot worktree's lock read from git's files is what `git
// worktree list` says; a .git file that does not match the worktree's
// record is left to git.
func TestLockOf(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "--lock", "--reason", "cadence: lot a", "-b", "cadence/w/a", wt)
	reason, locked, ok := lockOf(wt)
	if !ok || locked == "" || reason != "cadence: lot a" {
		t.Errorf("lockOf = %q, %q, %v", reason, locked, ok)
	}
	gittest.Git(t, repo, "worktree", "unlock", wt)
	if reason, locked, ok := lockOf(wt); !ok || locked != "" || reason != "" {
		t.Errorf("unlocked: lockOf = %q, %q, %v", reason, locked, ok)
	}
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "cadence/w/b", other)
	b, err := os.ReadFile(filepath.Join(other, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := lockOf(wt); ok {
		t.Error("a .git file naming another worktree's record was taken for the worktree's")
	}
}

// TestCommitsFromFiles: the commits read from the loose objects are `git
// log --reverse --format='%H %s'`'s, and what the files do not say for
// certain (a merge, a packed commit, a subject of several lines, a
// re-encoded message) is left to git.
func TestCommitsFromFiles(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	start := gittest.Git(t, repo, "rev-parse", "HEAD")
	gitLog := func(from, to string) []string {
		out := gittest.Git(t, repo, "log", "--reverse", "--format=%H %s", from+".."+to)
		if out == "" {
			return nil
		}
		return strings.Split(out, "\n")
	}
	gittest.Commit(t, repo, "one", map[string]string{"b.txt": "b\n"})
	gittest.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "two  \n\nwith a body\nof lines")
	gittest.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "three\n  \nbody after a blank line of spaces")
	head := gittest.Git(t, repo, "rev-parse", "HEAD")
	got, err := commitsFromFiles(repo, start, head)
	if want := gitLog(start, head); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("commitsFromFiles = %q, %v; git log says %q", got, err, want)
	}
	if got, err := commitsFromFiles(repo, head, head); err != nil || len(got) != 0 {
		t.Errorf("an empty range: %q, %v", got, err)
	}
	g := trepos()
	for _, msg := range []string{"a subject\nof two lines", "\nafter a blank line", "caf\u00e9"} {
		gittest.Git(t, repo, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", msg)
		tip := gittest.Git(t, repo, "rev-parse", "HEAD")
		if _, err := commitsFromFiles(repo, head, tip); !errors.Is(err, errAskGit) {
			t.Errorf("message %q: %v, want errAskGit", msg, err)
		}
		// Commits asks git then, and says what git says.
		if got, err := g.Commits(context.Background(), repo, head, tip); err != nil || !reflect.DeepEqual(got, gitLog(head, tip)) {
			t.Errorf("message %q: Commits = %q, %v; git log says %q", msg, got, err, gitLog(head, tip))
		}
		head = tip
	}
	gittest.Git(t, repo, "repack", "-q", "-a", "-d")
	if _, err := commitsFromFiles(repo, start, head); !errors.Is(err, errAskGit) {
		t.Errorf("packed commits: %v, want errAskGit", err)
	}
	if got, err := g.Commits(context.Background(), repo, start, head); err != nil || !reflect.DeepEqual(got, gitLog(start, head)) {
		t.Errorf("packed: Commits = %q, %v", got, err)
	}
	// Not an ancestor: git's answer.
	if _, err := commitsFromFiles(repo, head, start); !errors.Is(err, errAskGit) {
		t.Errorf("from not an ancestor: %v, want errAskGit", err)
	}
}

// TestKnownAncestor: once Commits walked a worktree's new commits down to
// the commit they started from, Rebase knows without git that the branch
// descends from that base; of any other base it knows nothing.
func TestKnownAncestor(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	base := gittest.Git(t, repo, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "cadence/w/a", wt)
	g := trepos()
	if !g.knownAncestor(base, wt) {
		t.Error("HEAD at the base itself is not known to descend from it")
	}
	gittest.Commit(t, wt, "a", map[string]string{"w.txt": "w\n"})
	if g.knownAncestor(base, wt) {
		t.Error("known before any walk")
	}
	head := gittest.Git(t, wt, "rev-parse", "HEAD")
	if cs, err := g.Commits(context.Background(), wt, base, head); err != nil || len(cs) != 1 {
		t.Fatalf("Commits: %q %v", cs, err)
	}
	if !g.knownAncestor(base, wt) {
		t.Error("not known after the walk")
	}
	other := gittest.Commit(t, repo, "moved", map[string]string{"m.txt": "m\n"})
	if g.knownAncestor(other, wt) {
		t.Error("a moved base is taken for an ancestor")
	}
}

// TestRefFilesNamedPipe: a named pipe where a ref file was (a step can
// leave one) is left to git, never read: the read would block for good.
func TestRefFilesNamedPipe(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a.txt": "a\n"})
	common := filepath.Join(repo, ".git")
	if err := syscall.Mkfifo(filepath.Join(common, "refs", "heads", "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 2)
	go func() {
		_, err := resolveRef(common, "refs/heads/pipe")
		done <- err
	}()
	go func() {
		_, err := snapshotFiles(repo, GuardedRefs)
		done <- err
	}()
	for i := 0; i < 2; i++ {
		select {
		case err := <-done:
			if !errors.Is(err, errAskGit) {
				t.Errorf("a named pipe: %v, want errAskGit", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("reading a named pipe as a ref blocked")
		}
	}
	// A folder where a ref is looked up is no ref (the packed file says).
	if sha, err := resolveRef(common, "refs/heads"); err != nil || sha != "" {
		t.Errorf("a folder: %q, %v", sha, err)
	}
}
