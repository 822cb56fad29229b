package transport

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
)

// TestAcceptRefusesHostile gives Accept results a hostile or broken
// worker could send: each is refused with its reason, the bundle is kept
// where it was, and the lead (every ref, the lot's worktree) is untouched.
func TestAcceptRefusesHostile(t *testing.T) {
	const max = 1 << 20
	cases := []struct {
		name string
		// make returns the path of the result bundle and the cap to give
		// Accept, from the worker's repository w (a checkout of l with one
		// more commit on the branch).
		make func(t *testing.T, l lead, w worker) (string, int64)
		want Reason
	}{
		{"other ref refs/heads/main", func(t *testing.T, l lead, w worker) (string, int64) {
			gittest.Git(t, w.dir, "checkout", "-q", "-b", "main")
			gittest.Commit(t, w.dir, "on main", map[string]string{"m.txt": "m\n"})
			gittest.Git(t, w.dir, "checkout", "-q", testBranch)
			return bundle(t, w.dir, "refs/heads/"+testBranch, "refs/heads/main", "^"+w.head), max
		}, ReasonRefs},
		{"other ref refs/tags/x", func(t *testing.T, l lead, w worker) (string, int64) {
			gittest.Git(t, w.dir, "tag", "x")
			return bundle(t, w.dir, "refs/heads/"+testBranch, "refs/tags/x", "^"+w.head), max
		}, ReasonRefs},
		{"other ref refs/cadence/backup", func(t *testing.T, l lead, w worker) (string, int64) {
			gittest.Git(t, w.dir, "update-ref", "refs/cadence/backup/w/lot1/1", "HEAD")
			return bundle(t, w.dir, "refs/heads/"+testBranch, "refs/cadence/backup/w/lot1/1", "^"+w.head), max
		}, ReasonRefs},
		{"only another branch", func(t *testing.T, l lead, w worker) (string, int64) {
			gittest.Git(t, w.dir, "branch", "main")
			return bundle(t, w.dir, "refs/heads/main", "^"+w.head), max
		}, ReasonRefs},
		{"head not descending (history rewritten from the base)", func(t *testing.T, l lead, w worker) (string, int64) {
			gittest.Git(t, w.dir, "reset", "-q", "--hard", l.base)
			gittest.Commit(t, w.dir, "rewritten", map[string]string{"src/r.txt": "r\n"})
			return bundle(t, w.dir, "refs/heads/"+testBranch, "^"+l.base), max
		}, ReasonNotDescendant},
		{"force-pushed head (the sent commit amended)", func(t *testing.T, l lead, w worker) (string, int64) {
			gittest.Git(t, w.dir, "reset", "-q", "--hard", w.head)
			gittest.Git(t, w.dir, "commit", "-q", "--amend", "-m", "lot: first step, amended")
			return bundle(t, w.dir, "refs/heads/"+testBranch, "^"+l.base), max
		}, ReasonNotDescendant},
		{"oversize", func(t *testing.T, l lead, w worker) (string, int64) {
			p := bundle(t, w.dir, "refs/heads/"+testBranch, "^"+w.head)
			return p, size(t, p) - 1
		}, ReasonOversize},
		{"prerequisites unknown to the lead", func(t *testing.T, l lead, w worker) (string, int64) {
			mid := gittest.Git(t, w.dir, "rev-parse", "HEAD")
			gittest.Commit(t, w.dir, "on top", map[string]string{"src/d.txt": "d\n"})
			return bundle(t, w.dir, "refs/heads/"+testBranch, "^"+mid), max
		}, ReasonPrerequisites},
		{"prerequisite of the lead's but not in the sent history", func(t *testing.T, l lead, w worker) (string, int64) {
			main := gittest.Commit(t, l.repo, "base moved", map[string]string{"README.md": "# moved\n"})
			other := filepath.Join(t.TempDir(), "other")
			gittest.Git(t, filepath.Dir(other), "clone", "-q", "--no-hardlinks", l.repo, other)
			gittest.Git(t, other, "checkout", "-q", "-b", testBranch, main)
			gittest.Commit(t, other, "on the moved base", map[string]string{"src/e.txt": "e\n"})
			return bundle(t, other, "refs/heads/"+testBranch, "^"+main), max
		}, ReasonPrerequisites},
		{"corrupt: a tree entry .GIT (git's fsck refuses it)", func(t *testing.T, l lead, w worker) (string, int64) {
			blob := gittest.Git(t, w.dir, "hash-object", "-w", "README.md")
			tree := treeOf(t, w.dir, "100644 blob "+blob+"\t.GIT\n")
			c := gittest.Git(t, w.dir, "commit-tree", "-p", "HEAD", "-m", "hostile", tree)
			gittest.Git(t, w.dir, "update-ref", "refs/heads/"+testBranch, c)
			return bundle(t, w.dir, "refs/heads/"+testBranch, "^"+w.head), max
		}, ReasonCorrupt},
		{"corrupt: not a bundle", func(t *testing.T, l lead, w worker) (string, int64) {
			p := filepath.Join(t.TempDir(), "result.bundle")
			if err := os.WriteFile(p, []byte("PK\x03\x04 not a bundle at all\n\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p, max
		}, ReasonCorrupt},
		{"corrupt: pack cut short", func(t *testing.T, l lead, w worker) (string, int64) {
			p := bundle(t, w.dir, "refs/heads/"+testBranch, "^"+w.head)
			if err := os.Truncate(p, size(t, p)-30); err != nil {
				t.Fatal(err)
			}
			return p, max
		}, ReasonCorrupt},
		{"corrupt: a symbolic link", func(t *testing.T, l lead, w worker) (string, int64) {
			p := bundle(t, w.dir, "refs/heads/"+testBranch, "^"+w.head)
			link := filepath.Join(t.TempDir(), "link.bundle")
			if err := os.Symlink(p, link); err != nil {
				t.Fatal(err)
			}
			return link, max
		}, ReasonCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTransport(t)
			ctx := testCtx(t)
			l := newLead(t)
			w := sendTo(t, tr, l)
			gittest.Commit(t, w.dir, "lot: second", map[string]string{"src/c.txt": "c\n"})
			path, max := c.make(t, l, w)
			if c.want == ReasonRefs {
				if heads := gittest.Git(t, l.repo, "bundle", "list-heads", path); heads == "" || heads == gittest.Git(t, w.dir, "rev-parse", "HEAD")+" refs/heads/"+testBranch {
					t.Fatalf("the hostile bundle names no other ref: %q", heads)
				}
			}
			before := gittest.Snapshot(t, l.repo, l.wt)
			keptBefore, _ := os.ReadFile(path)
			head, err := tr.Accept(ctx, l.repo, l.wt, path, testBranch, l.sent, max)
			var r *Refused
			if !errors.As(err, &r) {
				t.Fatalf("Accept = %s, %v; want a refusal (%s)", head, err, c.want)
			}
			if r.Reason != c.want || r.Bundle != path {
				t.Fatalf("refused %q (%s), bundle %s; want %q, %s", r.Reason, r.Detail, r.Bundle, c.want, path)
			}
			if after := gittest.Snapshot(t, l.repo, l.wt); after != before {
				t.Fatalf("the lead changed:\n%s\n---\n%s", before, after)
			}
			if kept, err := os.ReadFile(path); err != nil || string(kept) != string(keptBefore) {
				t.Fatalf("the refused bundle was not kept as it was: %v", err)
			}
		})
	}
}

// TestAcceptDirtyWorktree refuses a result while the lot's worktree on
// the lead has changes, untracked files, or an ignored file where the
// result adds one; nothing of the worktree is lost, and the kept bundle is
// accepted once the worktree is clean.
func TestAcceptDirtyWorktree(t *testing.T) {
	cases := []struct {
		name  string
		dirty func(t *testing.T, l lead)
		clean func(t *testing.T, l lead)
	}{
		{"tracked change", func(t *testing.T, l lead) {
			write(t, filepath.Join(l.wt, "src", "a.txt"), "mine\n")
		}, func(t *testing.T, l lead) {
			gittest.Commit(t, l.wt, "lead's own", map[string]string{"src/a.txt": "mine\n"})
		}},
		{"untracked file", func(t *testing.T, l lead) {
			write(t, filepath.Join(l.wt, "notes.txt"), "mine\n")
		}, func(t *testing.T, l lead) {
			if err := os.Rename(filepath.Join(l.wt, "notes.txt"), filepath.Join(t.TempDir(), "notes.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{"ignored file the result adds", func(t *testing.T, l lead) {
			write(t, filepath.Join(l.wt, "src", "c.txt"), "mine, ignored\n")
			write(t, filepath.Join(gittest.Git(t, l.wt, "rev-parse", "--path-format=absolute", "--git-common-dir"), "info", "exclude"), "src/c.txt\n")
			if st := gittest.Git(t, l.wt, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Fatalf("the ignored file shows in the status: %s", st)
			}
		}, func(t *testing.T, l lead) {
			if err := os.Remove(filepath.Join(l.wt, "src", "c.txt")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTransport(t)
			ctx := testCtx(t)
			l := newLead(t)
			w := sendTo(t, tr, l)
			head := gittest.Commit(t, w.dir, "lot: second", map[string]string{"src/c.txt": "c\n"})
			res := filepath.Join(t.TempDir(), "result.bundle")
			if err := tr.ResultBundle(ctx, w.dir, testBranch, w.head, res, 1<<20); err != nil {
				t.Fatal(err)
			}
			c.dirty(t, l)
			before := gittest.Snapshot(t, l.repo, l.wt)
			_, err := tr.Accept(ctx, l.repo, l.wt, res, testBranch, l.sent, 1<<20)
			var r *Refused
			if !errors.As(err, &r) || r.Reason != ReasonWorktree || !strings.Contains(r.Detail, l.wt) {
				t.Fatalf("Accept with a dirty worktree: %v", err)
			}
			if after := gittest.Snapshot(t, l.repo, l.wt); after != before {
				t.Fatalf("the lead changed:\n%s\n---\n%s", before, after)
			}
			c.clean(t, l)
			if c.name == "tracked change" {
				// the lead committed on the branch: the result is no
				// longer a fast-forward of it
				if _, err := tr.Accept(ctx, l.repo, l.wt, res, testBranch, l.sent, 1<<20); !errors.As(err, &r) || r.Reason != ReasonBranchMoved {
					t.Fatalf("Accept after the lead's commit: %v", err)
				}
				return
			}
			got, err := tr.Accept(ctx, l.repo, l.wt, res, testBranch, l.sent, 1<<20)
			if err != nil || got != head {
				t.Fatalf("Accept once clean = %s, %v; want %s", got, err, head)
			}
		})
	}
}

// bundle makes a bundle of revs of the repository at dir with git itself
// (what a hostile worker can send), and returns its path.
func bundle(t *testing.T, dir string, revs ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "result.bundle")
	gittest.Git(t, dir, append([]string{"bundle", "create", "-q", p}, revs...)...)
	return p
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeOf writes a tree of the `git mktree` entries of in and returns it.
func treeOf(t *testing.T, dir, in string) string {
	t.Helper()
	cmd := exec.Command("git", "mktree")
	cmd.Dir = dir
	cmd.Env = gittest.Env()
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git mktree: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestAcceptWithoutWorktree moves a branch checked out nowhere by
// update-ref, and refuses to move one checked out in a worktree it was
// not given (whose files would then disagree with its branch).
func TestAcceptWithoutWorktree(t *testing.T) {
	tr := newTransport(t)
	ctx := testCtx(t)
	l := newLead(t)
	w := sendTo(t, tr, l)
	head := gittest.Commit(t, w.dir, "lot: second", map[string]string{"src/c.txt": "c\n"})
	res := filepath.Join(t.TempDir(), "result.bundle")
	if err := tr.ResultBundle(ctx, w.dir, testBranch, w.head, res, 1<<20); err != nil {
		t.Fatal(err)
	}
	before := gittest.Snapshot(t, l.repo, l.wt)
	_, err := tr.Accept(ctx, l.repo, "", res, testBranch, l.sent, 1<<20)
	var r *Refused
	if !errors.As(err, &r) || r.Reason != ReasonWorktree || !strings.Contains(r.Detail, l.wt) {
		t.Fatalf("Accept without the worktree that has the branch: %v", err)
	}
	if after := gittest.Snapshot(t, l.repo, l.wt); after != before {
		t.Fatalf("the lead changed:\n%s\n---\n%s", before, after)
	}
	gittest.Git(t, l.repo, "worktree", "remove", l.wt)
	got, err := tr.Accept(ctx, l.repo, "", res, testBranch, l.sent, 1<<20)
	if err != nil || got != head {
		t.Fatalf("Accept = %s, %v; want %s", got, err, head)
	}
	if b := gittest.Git(t, l.repo, "rev-parse", "refs/heads/"+testBranch); b != head {
		t.Fatalf("branch at %s, want %s", b, head)
	}
}
