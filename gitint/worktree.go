package gitint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/spec"
)

// Repos implements what the executor needs of git, for every repository of
// a wave. Writes to one repository's .git (worktrees, branches, refs) are
// serialised, so lots running in parallel never collide on its locks.
type Repos struct {
	Git
	mu    sync.Mutex
	locks map[string]*sync.Mutex
	// pristine are the worktrees this Repos made (dir → the commit they
	// were made at) that no step has used yet (made, takePristine).
	pristine map[string]string
	// common caches each repository's git common dir (commonDirOf).
	common map[string]string
	// baseAt caches, per repository path, the worktree found to have the
	// base checked out (checkoutOf).
	baseAt map[string]string
	// ancestry holds pairs of commits {a, b} known to have a as an
	// ancestor of b (or equal): the commit graph never changes, so once
	// known it holds for good (Commits learns it, Rebase uses it).
	ancestry map[[2]string]bool
}

// NewRepos returns a Repos whose git starts from the environment environ
// (Git.Environ).
func NewRepos(environ []string) *Repos {
	return &Repos{Git: NewGit(environ), locks: map[string]*sync.Mutex{}}
}

// made records that Worktree just made the worktree at dir, at commit sha:
// clean, HEAD at sha, nothing run in it yet.
func (g *Repos) made(dir, sha string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pristine == nil {
		g.pristine = map[string]string{}
	}
	g.pristine[dir] = sha
}

// takePristine says whether the worktree at dir was made by Worktree at
// commit sha and not used since (one answer: the record is dropped).
func (g *Repos) takePristine(dir, sha string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.pristine[dir]
	delete(g.pristine, dir)
	return ok && at == sha
}

// lock returns the write lock of a repository.
func (g *Repos) lock(path string) *sync.Mutex {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.locks[path]
	if m == nil {
		m = &sync.Mutex{}
		g.locks[path] = m
	}
	return m
}

// Worktree makes the lot's worktree at dir on branch, from the repo's base
// (or from the branch if it exists already, as after an interrupted run),
// locked so that `git worktree prune` leaves it alone. A worktree already at
// dir on that branch is used as it is. It returns the commit the branch
// started from: the base's commit when the branch is new, else the merge
// base of the branch and the base (where a branch made by a cut-short
// earlier attempt started; "" when there is none). When fresh (the lot has run nothing there yet), a
// half-made worktree left by a killed cadence is removed and made again;
// otherwise anything unexpected at dir is left alone and reported.
func (g *Repos) Worktree(ctx context.Context, repo *spec.Repo, dir, branch string, fresh bool) (string, error) {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	// A git killed with cadence may have left lock files of the lot's own
	// (clearStaleLocks, staleOwnLock): remove them and try again; a few
	// rounds, as each attempt reports one.
	for round := 0; ; round++ {
		start, err := g.worktree(ctx, repo, dir, branch, fresh)
		lock := staleOwnLock(err, dir, branch)
		if lock == "" || round == 3 {
			return start, err
		}
		if rerr := os.Remove(lock); rerr != nil && !os.IsNotExist(rerr) {
			return start, err
		}
	}
}

// staleLock matches git's refusal to take a lock another (here: killed) git
// left behind.
var staleLock = regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`)

// staleOwnLock returns the lock file err names when it is one of the lot's
// own: its branch's ref lock (…/refs/heads/<branch>.lock) or a lock in its
// worktree's private git dir (…/worktrees/<name>/…, the one dir/.git
// names). Locks of any other ref or worktree are never named. "" when err is not such a refusal.
func staleOwnLock(err error, dir, branch string) string {
	if err == nil {
		return ""
	}
	m := staleLock.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	p := filepath.Clean(m[1])
	if strings.HasSuffix(filepath.ToSlash(p), "/refs/heads/"+branch+".lock") {
		return p
	}
	if gd, _, ok := linkedGitDir(dir); ok {
		if rel, err := filepath.Rel(gd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return p
		}
	}
	return ""
}

// worktree is Worktree's one attempt, under the repository's write lock.
func (g *Repos) worktree(ctx context.Context, repo *spec.Repo, dir, branch string, fresh bool) (string, error) {
	if err := clearStaleLocks(dir, branch); err != nil {
		return "", err
	}
	// git runs in dir only while dir is there: started in a missing
	// folder it fails as "fork/exec …/git: no such file or directory".
	if _, serr := os.Stat(dir); serr == nil {
		// A rebase cadence started and never finished (it was killed while
		// integrating): abort it, which puts the branch and the worktree
		// back exactly as they were before it.
		if g.rebaseInProgress(ctx, dir) {
			if err := g.abortRebase(ctx, dir, branch); err != nil {
				return "", err
			}
		}
		if out, err := g.Run(ctx, dir, "rev-parse", "--abbrev-ref", "HEAD"); err == nil && strings.TrimSpace(out) == branch {
			if _, serr := g.Run(ctx, dir, "status", "--porcelain"); serr == nil {
				return g.startOf(ctx, repo, branch), nil
			}
		}
		if !fresh {
			return "", fmt.Errorf("%s is not a usable worktree of %s on %s; move it aside", dir, repo.Path, branch)
		}
		// Only cadence writes here, and the lot has not started: this is a
		// `git worktree add` that was cut short.
		_, _ = g.Run(ctx, repo.Path, "worktree", "unlock", dir)
		if _, err := g.Run(ctx, repo.Path, "worktree", "remove", "--force", "--force", dir); err != nil {
			if err := os.RemoveAll(dir); err != nil {
				return "", err
			}
		}
		_, _ = g.Run(ctx, repo.Path, "worktree", "prune")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	if err := ensureIgnored(dir); err != nil {
		return "", err
	}
	reason := LockReason(branch)
	// The common case, a new lot: no branch yet (read from the ref files),
	// so one `worktree add -b` from the base's commit. When git refuses,
	// the full path below finds out why.
	if tip, err := branchOf(repo.Path, branch); err == nil && tip == "" {
		if base, err := branchOf(repo.Path, repo.Base); err == nil && base != "" {
			if _, err := g.Run(ctx, repo.Path, "worktree", "add", "--lock", "--reason", reason, "-b", branch, dir, base); err == nil {
				g.made(dir, base)
				return base, nil
			}
		}
	}
	// The folder is not there: git may still keep the record of a worktree
	// of the lot whose folder was deleted (locked, so never pruned), which
	// makes `worktree add` refuse. The branch is made again from below.
	if err := g.dropGone(ctx, repo.Path, dir, branch); err != nil {
		return "", err
	}
	if _, err := g.Run(ctx, repo.Path, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		if _, err := g.Run(ctx, repo.Path, "worktree", "add", "--lock", "--reason", reason, dir, branch); err != nil {
			return "", err
		}
		return g.startOf(ctx, repo, branch), nil
	}
	base, err := g.Run(ctx, repo.Path, "rev-parse", "--verify", "refs/heads/"+repo.Base+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("base branch %s: %w", repo.Base, err)
	}
	base = strings.TrimSpace(base)
	if _, err := g.Run(ctx, repo.Path, "worktree", "add", "--lock", "--reason", reason, "-b", branch, dir, base); err != nil {
		return "", err
	}
	g.made(dir, base)
	return base, nil
}

// clearStaleLocks removes the lock files a git process killed with cadence
// left in the lot's own worktree (every *.lock of the worktree's private
// git dir under <common>/worktrees/: index.lock, HEAD.lock, a rebase's
// MERGE_MSG.lock) and on the lot's own
// branch (<common>/refs/heads/<branch>.lock): git leaves them behind when it
// is killed by SIGKILL, and every later git command in the worktree then
// fails with "Unable to create … index.lock: File exists". Worktree is
// called before any step of the lot runs, with the wave's and the
// repository's locks held and the processes of earlier runs ended, so no
// live git can own them. Locks of any other worktree or ref (the lead's
// checkout among them) are never touched. A dir that is not a linked
// worktree is left alone.
func clearStaleLocks(dir, branch string) error {
	gitDir, common, ok := linkedGitDir(dir)
	if !ok {
		return nil // not a linked worktree: Worktree decides what to do
	}
	// Every lock file of the worktree's private git dir: index.lock and
	// HEAD.lock, and those a killed rebase leaves (MERGE_MSG.lock,
	// ORIG_HEAD.lock, …: the next rebase then failed with "could not lock
	// MERGE_MSG", apply_sigint_moments).
	own, _ := filepath.Glob(filepath.Join(globEscape(gitDir), "*.lock"))
	for _, p := range append(own,
		filepath.Join(gitDir, "index.lock"),
		filepath.Join(gitDir, "HEAD.lock"),
		filepath.Join(common, "refs", "heads", filepath.FromSlash(branch)+".lock"),
	) {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove the stale lock %s: %w", p, err)
		}
	}
	return nil
}

// linkedGitDir reads the .git file of the linked worktree dir ("gitdir:
// <common>/worktrees/<name>", gitrepository-layout(5)) without starting git:
// the worktree's private git dir (git picks <name>, with a suffix when
// another worktree has the same) and the common git dir. ok is false when
// dir is not a linked worktree.
func linkedGitDir(dir string) (gitDir, common string, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "", "", false
	}
	gd, found := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !found || gd == "" {
		return "", "", false
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	gd = filepath.Clean(gd)
	if filepath.Base(filepath.Dir(gd)) != "worktrees" {
		return "", "", false
	}
	return gd, filepath.Dir(filepath.Dir(gd)), true
}

// startOf is where an existing lot branch started: its merge base with the
// repo's base ("" when git cannot say).
func (g Git) startOf(ctx context.Context, repo *spec.Repo, branch string) string {
	out, err := g.Run(ctx, repo.Path, "merge-base", "refs/heads/"+branch, "refs/heads/"+repo.Base)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// abortRebase ends a rebase of branch that cadence left unfinished. `git
// rebase --abort` restores branch and worktree; when git refuses (killed in
// the middle of applying a commit, the half-applied files are in the way),
// the rebase is dropped and the worktree checked out afresh from the
// branch, which still points at the lot's commits: what is lost is only
// the rebase's own half-applied copy of them (integration starts from a
// clean tree). A rebase of any other branch is not touched; one whose
// branch git had not yet written down is taken for the lot's.
func (g Git) abortRebase(ctx context.Context, dir, branch string) error {
	if _, err := g.Run(ctx, dir, "rebase", "--abort"); err == nil {
		return nil
	}
	headName := ""
	if p, err := g.Run(ctx, dir, "rev-parse", "--git-path", "rebase-merge/head-name"); err == nil {
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if b, err := os.ReadFile(p); err == nil {
			headName = strings.TrimSpace(string(b))
		}
	}
	// An empty head-name is a rebase killed while git was still writing
	// its state (found by the SIGINT-moments test under load): in the
	// lot's own worktree that can only be cadence's rebase of the lot's
	// branch, which git had not touched yet.
	if headName != "refs/heads/"+branch && headName != "" {
		return fmt.Errorf("%s: an unfinished rebase (of %q) could not be aborted; finish or abort it by hand", dir, headName)
	}
	if _, err := g.Run(ctx, dir, "rebase", "--quit"); err != nil {
		return err
	}
	if _, err := g.Run(ctx, dir, "checkout", "-q", "-f", branch); err != nil {
		return fmt.Errorf("%s: after an unfinished rebase: %w", dir, err)
	}
	return nil
}

// rebaseInProgress reports whether the worktree at dir is in the middle of
// a rebase.
func (g Git) rebaseInProgress(ctx context.Context, dir string) bool {
	for _, name := range []string{"rebase-merge", "rebase-apply"} {
		p, err := g.Run(ctx, dir, "rev-parse", "--git-path", name)
		if err != nil {
			return false
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// ensureIgnored writes the self-ignoring .gitignore of the .cadence work
// folder above dir (the folder that holds "worktrees"), so that cadence's
// files never show in a repository that contains the wave file.
func ensureIgnored(dir string) error {
	if wd := layout.EnclosingWorkDir(dir); wd != "" {
		return layout.IgnoreSelf(wd)
	}
	return nil
}

// Head returns the worktree's HEAD commit: from its files when they say
// (headOf), else `git rev-parse --verify HEAD`.
func (g *Repos) Head(ctx context.Context, dir string) (string, error) {
	if sha, err := headOf(dir); err == nil {
		return sha, nil
	}
	out, err := g.Run(ctx, dir, "rev-parse", "--verify", "HEAD")
	return strings.TrimSpace(out), err
}

// Dirty lists the worktree's uncommitted changes, untracked files included.
func (g *Repos) Dirty(ctx context.Context, dir string) ([]string, error) {
	return g.dirtyFiles(ctx, dir)
}

func (g Git) dirtyFiles(ctx context.Context, dir string) ([]string, error) {
	out, err := g.Run(ctx, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	return parsePorcelainZ(out), nil
}

// Changed lists the files the commits from..to add or change (not those
// they only delete) in the repository of the worktree at dir, as git
// names them: slash-separated paths from the repository's root. A rename
// counts as an addition of the new path.
func (g *Repos) Changed(ctx context.Context, dir, from, to string) ([]string, error) {
	out, err := g.Run(ctx, dir, "diff", "--name-only", "-z", "--no-renames", "--diff-filter=d", "--no-ext-diff", from, to, "--")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// Commits lists from..to, oldest first, as "sha subject": read from the
// loose object files when they say (commitsFromFiles: the commits a command
// just made), else `git log`.
func (g *Repos) Commits(ctx context.Context, dir, from, to string) ([]string, error) {
	if cs, err := commitsFromFiles(dir, from, to); err == nil {
		g.mu.Lock()
		if g.ancestry == nil {
			g.ancestry = map[[2]string]bool{}
		}
		g.ancestry[[2]string{from, to}] = true // the walk went from to down to from
		g.mu.Unlock()
		return cs, nil
	}
	out, err := g.Run(ctx, dir, "log", "--reverse", "--format=%H %s", from+".."+to)
	if err != nil {
		return nil, err
	}
	var cs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			cs = append(cs, l)
		}
	}
	return cs, nil
}
