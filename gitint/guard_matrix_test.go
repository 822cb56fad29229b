package gitint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/spec"
)

// lab is a repository under cadence's guard, as during a wave: the lead's
// checkout (on branch "lead", so that main is checked out nowhere), a bare
// remote "origin", and one lot worktree on cadence/w/a, guarded.
type lab struct {
	t                  *testing.T
	repo, remote, wt   string
	marks              string // folder where the repository's hooks leave marks
	stepEnv, plainEnv  []string
	remove             func() error
	remoteBefore, main string
}

// hookLayouts are the hook configurations a repository may have: where its
// own hooks are, and how a lot worktree gets them.
var hookLayouts = []string{"default", "absolute", "relative", "husky"}

// foreignHook is a hook of the repository's own: it leaves a mark named
// after the hook in marks, and a foreign pre-push would let every push
// through.
func foreignHook(marks, name string) string {
	return "#!/bin/sh\ntouch " + shQuote(filepath.Join(marks, name)) + "\nexit 0\n"
}

func newLab(t *testing.T, layout string) *lab {
	t.Helper()
	ctx := context.Background()
	l := &lab{t: t, marks: t.TempDir()}
	l.repo = gittest.NewRepo(t, nil)
	l.remote = filepath.Join(t.TempDir(), "origin.git")
	gittest.Git(t, l.repo, "init", "-q", "--bare", l.remote)
	gittest.Git(t, l.repo, "remote", "add", "origin", l.remote)
	gittest.Git(t, l.repo, "push", "-q", "origin", "main")
	writeHooks := func(dir string) {
		os.MkdirAll(dir, 0o755)
		for _, h := range []string{"pre-commit", "pre-push", "reference-transaction", "post-checkout"} {
			if err := os.WriteFile(filepath.Join(dir, h), []byte(foreignHook(l.marks, h)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	switch layout {
	case "default":
		writeHooks(filepath.Join(l.repo, ".git", "hooks"))
	case "absolute":
		abs := t.TempDir()
		writeHooks(abs)
		gittest.Git(t, l.repo, "config", "core.hooksPath", abs)
	case "relative":
		// Tracked in the repository: the lot worktree has its own copy.
		writeHooks(filepath.Join(l.repo, ".githooks"))
		gittest.Git(t, l.repo, "add", ".githooks")
		gittest.Git(t, l.repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "hooks")
		gittest.Git(t, l.repo, "config", "core.hooksPath", ".githooks")
	case "husky":
		// husky 9: core.hooksPath=.husky/_, a folder husky generates (at
		// npm install) and ignores; the lot makes its own (below).
		os.MkdirAll(filepath.Join(l.repo, ".husky"), 0o755)
		os.WriteFile(filepath.Join(l.repo, ".gitignore"), []byte(".husky/_\n"), 0o644)
		gittest.Git(t, l.repo, "add", ".gitignore")
		gittest.Git(t, l.repo, "commit", "-q", "-m", "husky")
		gittest.Git(t, l.repo, "config", "core.hooksPath", ".husky/_")
		writeHooks(filepath.Join(l.repo, ".husky", "_"))
	}
	gittest.Git(t, l.repo, "push", "-q", "origin", "main")
	gittest.Git(t, l.repo, "checkout", "-q", "-b", "lead")
	os.RemoveAll(l.marks)
	os.MkdirAll(l.marks, 0o755)

	remove, err := tgit().InstallGuard(ctx, l.repo)
	if err != nil {
		t.Fatal(err)
	}
	l.remove = remove
	t.Cleanup(func() { remove() })
	l.wt = filepath.Join(t.TempDir(), "a")
	if _, err := trepos().Worktree(ctx, repoSpec(l.repo), l.wt, "cadence/w/a", true); err != nil {
		t.Fatal(err)
	}
	if err := GuardWorktree(ctx, l.repo, l.wt, "cadence/w/a"); err != nil {
		t.Fatal(err)
	}
	if layout == "husky" {
		writeHooks(filepath.Join(l.wt, ".husky", "_")) // the lot's npm install
	}
	l.plainEnv = append(gittest.Env(), "CADENCE_WAVE=w", "CADENCE_LOT=a")
	l.stepEnv = append(append([]string{}, l.plainEnv...), tgit().PushBlockEnv(ctx, []string{l.repo}, l.plainEnv)...)
	l.remoteBefore = gittest.Git(t, l.remote, "for-each-ref")
	l.main = gittest.Git(t, l.repo, "rev-parse", "main")
	return l
}

// sh runs a shell script in dir with env and returns its output.
func (l *lab) sh(dir string, env []string, script string) (string, error) {
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// envs are the ways a lot's git may run: with the step's guard
// environment, without it (a process that dropped it), and with
// GIT_CONFIG_COUNT unset.
func (l *lab) envs() map[string][]string {
	return map[string][]string{"step": l.stepEnv, "plain": l.plainEnv, "env-u": l.stepEnv}
}

func prefixFor(name string) string {
	if name == "env-u" {
		return "env -u GIT_CONFIG_COUNT "
	}
	return ""
}

// marked reports whether the repository's own hook left its mark, and
// clears it.
func (l *lab) marked(hook string) bool {
	p := filepath.Join(l.marks, hook)
	_, err := os.Stat(p)
	os.Remove(p)
	return err == nil
}

// pushForms are the pushes a lot may try (%R is the remote's path).
var pushForms = []string{
	"git push origin HEAD:refs/heads/x",
	"git push --no-verify origin HEAD:refs/heads/x",
	"git push %R HEAD:refs/heads/x",
	"git push file://%R HEAD:refs/heads/x",
	"git -c core.hooksPath=/dev/null push origin HEAD:refs/heads/x",
	"git -c core.hooksPath=/dev/null push --no-verify %R HEAD:refs/heads/x",
	"bash -c 'git push -q origin HEAD:refs/heads/x'",
	"git push origin HEAD:main",
}

func TestGuardPreventsPushes(t *testing.T) {
	for _, layout := range hookLayouts {
		t.Run(layout, func(t *testing.T) {
			l := newLab(t, layout)
			gittest.Commit(t, l.wt, "lot work", map[string]string{"w.txt": "w\n"})
			for name, env := range l.envs() {
				for _, form := range pushForms {
					script := prefixFor(name) + strings.ReplaceAll(form, "%R", l.remote)
					out, err := l.sh(l.wt, env, script)
					if err == nil {
						t.Errorf("%s, %s: the push went through:\n%s", name, script, out)
					} else if !strings.Contains(out, "cadence") {
						t.Errorf("%s, %s: refused without saying cadence's why:\n%s", name, script, out)
					}
				}
			}
			if got := gittest.Git(t, l.remote, "for-each-ref"); got != l.remoteBefore {
				t.Errorf("the remote changed:\n%s", got)
			}
			if l.marked("pre-push") {
				t.Error("the repository's own pre-push ran for a lot's push")
			}
			// The step's message names the wave and the lot.
			out, _ := l.sh(l.wt, l.stepEnv, "git push origin HEAD:refs/heads/x")
			if !strings.Contains(out, "cadence: no push during wave w (lot a)") {
				t.Errorf("message: %s", out)
			}
		})
	}
}

// From a step, the guard environment reaches the lead's checkout too; a
// test suite's own repositories are left alone.
func TestGuardEnvReachesEveryWorktreeOfTheRepo(t *testing.T) {
	l := newLab(t, "default")
	for _, script := range []string{
		"git -C " + shQuote(l.repo) + " push origin lead:refs/heads/x",
		"git -C " + shQuote(l.repo) + " push --no-verify " + shQuote(l.remote) + " lead:refs/heads/x",
		"git -C " + shQuote(l.repo) + " update-ref refs/heads/main lead",
		"git -C " + shQuote(l.repo) + " commit -q --allow-empty -m sneaky",
	} {
		if out, err := l.sh(l.marks, l.stepEnv, script); err == nil {
			t.Errorf("%s went through:\n%s", script, out)
		}
	}
	// A clone the step makes cannot push to the repository's remote.
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := l.sh(l.marks, l.stepEnv, "git clone -q "+shQuote(l.remote)+" "+shQuote(clone)); err != nil {
		t.Fatalf("clone from a step: %v\n%s", err, out)
	}
	if out, err := l.sh(clone, l.stepEnv, "git push -q --no-verify origin HEAD:refs/heads/y"); err == nil {
		t.Errorf("a clone pushed to the remote:\n%s", out)
	}
	if got := gittest.Git(t, l.remote, "for-each-ref"); got != l.remoteBefore {
		t.Errorf("the remote changed:\n%s", got)
	}
	if got := gittest.Git(t, l.repo, "rev-parse", "main"); got != l.main {
		t.Error("main moved")
	}
	// A test suite's own repositories: commits, branches and pushes work.
	other := filepath.Join(t.TempDir(), "other")
	bare := filepath.Join(t.TempDir(), "other.git")
	script := "git init -q -b main " + shQuote(other) + " && git init -q --bare " + shQuote(bare) +
		" && cd " + shQuote(other) + " && git commit -q --allow-empty -m x && git branch b && git tag t" +
		" && git remote add origin " + shQuote(bare) + " && git push -q origin main b t"
	if out, err := l.sh(l.marks, l.stepEnv, script); err != nil {
		t.Errorf("a test suite's own repository: %v\n%s", err, out)
	}
}

func TestGuardPreventsForeignRefUpdates(t *testing.T) {
	for _, layout := range hookLayouts {
		t.Run(layout, func(t *testing.T) {
			l := newLab(t, layout)
			gittest.Commit(t, l.wt, "lot work", map[string]string{"w.txt": "w\n"})
			refs := gittest.Git(t, l.repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main", "refs/heads/lead", "refs/tags", "refs/remotes", "refs/cadence")
			for name, env := range l.envs() {
				p := prefixFor(name)
				for _, script := range []string{
					p + "git update-ref refs/heads/main HEAD",
					p + "git branch -f main HEAD",
					p + "git branch other",
					p + "git checkout -q main && " + p + "git commit -q --allow-empty -m sneaky",
					p + "git tag v9",
					p + "git update-ref refs/remotes/origin/main HEAD",
					p + "git update-ref refs/cadence/rescue/x HEAD",
					p + "git update-ref main-worktree/HEAD HEAD",
					p + "git update-ref -d refs/heads/lead",
				} {
					if out, err := l.sh(l.wt, env, script); err == nil {
						t.Errorf("%s, %s: allowed:\n%s", name, script, out)
					}
					l.sh(l.wt, env, "git checkout -q cadence/w/a")
				}
			}
			got := gittest.Git(t, l.repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main", "refs/heads/lead", "refs/tags", "refs/remotes", "refs/cadence")
			if got != refs {
				t.Errorf("refs moved:\nbefore:\n%s\nafter:\n%s", refs, got)
			}
			out, _ := l.sh(l.wt, l.plainEnv, "git update-ref refs/heads/main HEAD")
			if !strings.Contains(out, "cadence: wave w (lot a) may not update refs/heads/main") {
				t.Errorf("message: %s", out)
			}
		})
	}
}

// What a lot does to its own branch still works, and the repository's own
// hooks still run for it.
func TestGuardLetsTheLotWork(t *testing.T) {
	for _, layout := range hookLayouts {
		t.Run(layout, func(t *testing.T) {
			l := newLab(t, layout)
			// The lead moves on (and pushes) during the wave.
			gittest.Git(t, l.repo, "checkout", "-q", "main")
			gittest.Commit(t, l.repo, "lead's", map[string]string{"lead.txt": "l\n"})
			if !l.marked("pre-commit") {
				t.Error("the lead's pre-commit hook did not run")
			}
			gittest.Git(t, l.repo, "push", "-q", "origin", "main")
			if !l.marked("pre-push") {
				t.Error("the lead's pre-push hook did not run")
			}
			pick := gittest.Commit(t, l.repo, "to pick", map[string]string{"pick.txt": "p\n"})
			gittest.Git(t, l.repo, "reset", "-q", "--hard", "HEAD~1")
			start := gittest.Git(t, l.wt, "rev-parse", "HEAD")
			for name, env := range map[string][]string{"step": l.stepEnv, "plain": l.plainEnv} {
				scripts := []string{
					"git reset -q --hard " + start,
					"echo 1 > a.txt && git add a.txt && git commit -q -m one",
				}
				if layout == "default" {
					// What git does besides a commit: the same hooks
					// whatever the repository's layout.
					scripts = append(scripts,
						"echo 2 > a.txt && git commit -q -am two && echo 3 > a.txt && git commit -q -am three",
						"GIT_SEQUENCE_EDITOR='sed -i 1s/^pick/reword/' GIT_EDITOR=true git rebase -q -i HEAD~2",
						"git rebase -q main",
						"git cherry-pick "+pick,
						"echo dirty >> a.txt && git stash -q && git stash pop -q && git commit -q -am stashed",
						"git reset -q --hard HEAD~1",
						// Remote-tracking refs are refused, FETCH_HEAD is not.
						"git fetch -q --no-tags --refmap= origin main && git merge -q --no-edit FETCH_HEAD",
						"git checkout -q --detach && git checkout -q cadence/w/a",
						"git bisect start HEAD HEAD~2 >/dev/null && git bisect reset >/dev/null 2>&1",
					)
				}
				for _, script := range scripts {
					if out, err := l.sh(l.wt, env, script); err != nil {
						t.Errorf("%s, %s: %v\n%s", name, script, err, out)
					}
				}
				if !l.marked("pre-commit") {
					t.Errorf("%s: the repository's pre-commit hook did not run for the lot's commits", name)
				}
				if !l.marked("reference-transaction") {
					t.Errorf("%s: the repository's reference-transaction hook was not chained", name)
				}
			}
			if got := gittest.Git(t, l.wt, "rev-parse", "--abbrev-ref", "HEAD"); got != "cadence/w/a" {
				t.Errorf("HEAD on %s", got)
			}
			if err := l.remove(); err != nil {
				t.Fatal(err)
			}
			// The wave is over: a plain push from the worktree works again.
			if out, err := l.sh(l.wt, gittest.Env(), "git push -q --no-verify origin HEAD:refs/heads/after"); err != nil {
				t.Errorf("push after the wave: %v\n%s", err, out)
			}
		})
	}
}

func repoSpec(path string) *spec.Repo { return &spec.Repo{Name: "app", Path: path, Base: "main"} }
