package gitint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// SetUpWorktree implements executor.Git: the submodules of the new lot
// worktree at dir (unless b.Submodules is off; SubmodulesAuto and
// SubmodulesOn alike check out those its .gitmodules lists), then b's copy
// files.
func (g *Repos) SetUpWorktree(ctx context.Context, repo *spec.Repo, dir string, b spec.Bootstrap) error {
	if b.Submodules != spec.SubmodulesOff {
		if err := g.CheckoutSubmodules(ctx, repo, dir); err != nil {
			return err
		}
	}
	return g.CopyIn(ctx, repo, dir, b.Copy)
}

// CheckoutSubmodules checks out, in the lot worktree at dir of repo, the
// submodules its .gitmodules lists, recursively, each cloned from the
// lead's own copy of it: <common>/modules/<name> (git's place for a
// submodule's repository), or the checkout's <path>/.git folder of an
// older layout. Nothing is fetched from a network: every protocol but
// file is refused (protocol.allow=never), and the clones' URLs are given
// on the command line (-c submodule.<name>.url), so neither the lead's
// .git/config nor the worktree's .gitmodules is written. A submodule the
// lead's checkout has no copy of, or whose copy lacks the commit the
// worktree records, is an error naming it. A worktree without a
// .gitmodules has nothing to do.
func (g Git) CheckoutSubmodules(ctx context.Context, repo *spec.Repo, dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, ".gitmodules")); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out, err := g.Run(ctx, repo.Path, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return err
	}
	return g.checkoutSubmodules(ctx, dir, repo.Path, filepath.Join(strings.TrimSpace(out), "modules"), 0)
}

// maxSubmoduleDepth bounds the nesting of submodules (a submodule whose
// .gitmodules names itself would recurse for ever).
const maxSubmoduleDepth = 8

// submodule is one entry of a .gitmodules: its name and path.
type submodule struct{ name, path string }

// submodulesOf lists the submodules of the .gitmodules in dir (none when
// there is no such file), sorted by path.
func (g Git) submodulesOf(ctx context.Context, dir string) ([]submodule, error) {
	if _, err := os.Lstat(filepath.Join(dir, ".gitmodules")); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	out, err := g.Run(ctx, dir, "config", "--file", ".gitmodules", "-z", "--get-regexp", `^submodule\..*\.path$`)
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode == 1 { // no entry
			return nil, nil
		}
		return nil, err
	}
	var subs []submodule
	for _, entry := range strings.Split(out, "\x00") {
		key, path, ok := strings.Cut(entry, "\n")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "submodule."), ".path")
		subs = append(subs, submodule{name, path})
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].path < subs[j].path })
	return subs, nil
}

// checkoutSubmodules is CheckoutSubmodules for the repository checked out
// at dir, whose submodules the lead has under modules (or, older layout,
// in the checkout at lead).
func (g Git) checkoutSubmodules(ctx context.Context, dir, lead, modules string, depth int) error {
	subs, err := g.submodulesOf(ctx, dir)
	if err != nil || len(subs) == 0 {
		return err
	}
	if depth == maxSubmoduleDepth {
		return fmt.Errorf("submodules nested more than %d deep in %s", maxSubmoduleDepth, dir)
	}
	args := []string{"-c", "protocol.allow=never", "-c", "protocol.file.allow=always"}
	var paths []string
	srcs := map[submodule]string{}
	for _, s := range subs {
		if strings.ContainsAny(s.name, "=\n") {
			return fmt.Errorf("submodule %s: its name %q cannot be given to git -c", s.path, s.name)
		}
		src := filepath.Join(modules, filepath.FromSlash(s.name))
		if !isGitDir(src) {
			old := filepath.Join(lead, filepath.FromSlash(s.path))
			if st, err := os.Stat(filepath.Join(old, ".git")); err != nil || !st.IsDir() {
				return fmt.Errorf("submodule %s has no local copy (no %s): run `git submodule update --init` in %s first; cadence never fetches one", s.path, src, lead)
			}
			src = old
		}
		srcs[s] = src
		args = append(args, "-c", "submodule."+s.name+".url="+src, "-c", "submodule."+s.name+".active=true")
		paths = append(paths, s.path)
	}
	args = append(append(args, "submodule", "--quiet", "update", "--init", "--checkout", "--"), paths...)
	if _, err := g.Run(ctx, dir, args...); err != nil {
		return fmt.Errorf("check out the submodules %s: %w", strings.Join(paths, ", "), err)
	}
	for _, s := range subs {
		src := srcs[s]
		nested := filepath.Join(src, "modules")
		if !isGitDir(src) { // the older layout: the checkout's <path>/.git
			nested = filepath.Join(src, ".git", "modules")
		}
		if err := g.checkoutSubmodules(ctx, filepath.Join(dir, filepath.FromSlash(s.path)), filepath.Join(lead, filepath.FromSlash(s.path)), nested, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// isGitDir says whether p is a git directory (it has HEAD and objects).
func isGitDir(p string) bool {
	if _, err := os.Stat(filepath.Join(p, "HEAD")); err != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(p, "objects"))
	return err == nil && st.IsDir()
}

// BaseHasGitmodules says whether the base branch of the repository at
// path has a .gitmodules at its root (its lots' worktrees then get
// submodules under the default).
func (g Git) BaseHasGitmodules(ctx context.Context, path, base string) bool {
	_, err := g.Run(ctx, path, "cat-file", "-e", "refs/heads/"+base+":.gitmodules")
	return err == nil
}

// CopyProblem is why a copy entry of a repository cannot be copied into
// its lots' worktrees ("" when it can).
type CopyProblem struct {
	// Path is the entry (slash-separated, relative to the repository).
	Path string
	// Problem says what is wrong, naming neither the lead's folder nor
	// the file's contents: "is not there", "is a symbolic link", …
	Problem string
}

// CheckCopy checks the copy entries of a repository against the lead's
// checkout at path and its base: each must be a regular file there (not a
// symbolic link, at most spec.MaxCopyBytes), not tracked in the base (a
// tracked file is already in every worktree, and a lot's change to it
// would be committed), and ignored by git (else it would show as the
// lot's uncommitted change). It returns the entries that fail, in order.
func (g Git) CheckCopy(ctx context.Context, path, base string, copies []string) ([]CopyProblem, error) {
	if len(copies) == 0 {
		return nil, nil
	}
	var out []CopyProblem
	bad := map[string]bool{}
	fail := func(p, problem string) {
		if !bad[p] {
			bad[p] = true
			out = append(out, CopyProblem{p, problem})
		}
	}
	tracked, err := g.trackedIn(ctx, path, base, copies)
	if err != nil {
		return nil, err
	}
	ignored, err := g.ignoredIn(ctx, path, copies)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, p := range copies {
		if tracked[p] {
			fail(p, "is tracked in the base "+base+": copy is for files git does not hold (commit a change to it instead)")
		}
		// through the root: a folder of the path that links out of the
		// repository leaves it, as an absolute path would
		st, err := root.Lstat(filepath.FromSlash(p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fail(p, "is not in the repository's folder: create it there, or take it out of copy")
		case err != nil:
			fail(p, err.Error())
		case st.Mode()&fs.ModeSymlink != 0:
			fail(p, "is a symbolic link: copy takes regular files only")
		case !st.Mode().IsRegular():
			fail(p, "is not a regular file: copy takes regular files only")
		case st.Size() > spec.MaxCopyBytes:
			fail(p, fmt.Sprintf("is %d bytes, more than copy takes (%d)", st.Size(), spec.MaxCopyBytes))
		}
		if !ignored[p] && !tracked[p] {
			fail(p, "is not ignored by git: in a worktree it would be the lot's uncommitted change; add it to .gitignore")
		}
	}
	return out, nil
}

// trackedIn says which of paths the commit base of the repository at
// path holds (as a file, or as a folder with files in it).
func (g Git) trackedIn(ctx context.Context, path, base string, paths []string) (map[string]bool, error) {
	args := append([]string{"ls-tree", "-r", "--name-only", "-z", "refs/heads/" + base, "--"}, paths...)
	out, err := g.Run(ctx, path, args...)
	if err != nil {
		return nil, err
	}
	got := map[string]bool{}
	for _, name := range strings.Split(out, "\x00") {
		for _, p := range paths {
			if name == p || strings.HasPrefix(name, p+"/") {
				got[p] = true
			}
		}
	}
	return got, nil
}

// ignoredIn says which of paths git ignores in the checkout at path (its
// .gitignore files, info/exclude and core.excludesFile), whether or not
// they are in the index.
func (g Git) ignoredIn(ctx context.Context, path string, paths []string) (map[string]bool, error) {
	out, err := g.runStdin(ctx, path, strings.Join(paths, "\x00")+"\x00", "check-ignore", "--no-index", "-z", "--stdin")
	var ge *Error
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode == 1) { // 1: none is ignored
		return nil, err
	}
	got := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			got[p] = true
		}
	}
	return got, nil
}

// CopyIn copies the copy entries from the lead's checkout of repo into
// the lot worktree at dir, making their folders, keeping their mode bits;
// a file already in the worktree is left as it is (it was copied before,
// or the lot wrote it). Each must still be a regular file of at most
// spec.MaxCopyBytes (CheckCopy), and git must ignore the copy in the
// worktree: one it does not is removed again and reported, as it would
// be the lot's uncommitted change.
func (g Git) CopyIn(ctx context.Context, repo *spec.Repo, dir string, copies []string) error {
	var made []string
	// Both ends are opened through an os.Root: a folder of the path
	// that is a symbolic link out of the checkout or the worktree (a
	// base that commits conf as a link, a link swapped in since plan)
	// is refused, never followed.
	src, err := os.OpenRoot(repo.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer dst.Close()
	for _, p := range copies {
		rel := filepath.FromSlash(p)
		if _, err := dst.Lstat(rel); err == nil {
			continue
		}
		if err := copyFile(src, dst, rel); err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		made = append(made, p)
	}
	if len(made) == 0 {
		return nil
	}
	ignored, err := g.runStdin(ctx, dir, strings.Join(made, "\x00")+"\x00", "check-ignore", "-z", "--stdin")
	var ge *Error
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode == 1) {
		return err
	}
	is := map[string]bool{}
	for _, p := range strings.Split(ignored, "\x00") {
		is[p] = true
	}
	for _, p := range made {
		if !is[p] {
			_ = os.Remove(filepath.Join(dir, filepath.FromSlash(p)))
			return fmt.Errorf("copy %s: git does not ignore it in the worktree, so it would be the lot's uncommitted change; add it to the base's .gitignore", p)
		}
	}
	return nil
}

// copyFile copies the regular file rel of the root src to rel in the
// root dst (which must not exist there), making its folders; a source
// that is no regular file, or is larger than spec.MaxCopyBytes, is
// refused, and so is a path that leaves either root.
func copyFile(src, dst *os.Root, rel string) error {
	in, err := src.Open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if lst, err := src.Lstat(rel); err != nil || lst.Mode()&fs.ModeSymlink != 0 || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", rel)
	}
	if st.Size() > spec.MaxCopyBytes {
		return fmt.Errorf("%s is %d bytes, more than copy takes (%d)", rel, st.Size(), spec.MaxCopyBytes)
	}
	if d := filepath.Dir(rel); d != "." {
		if err := dst.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	out, err := dst.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, spec.MaxCopyBytes+1)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// submodulesKept checks that removing the lot worktree at dir of repo
// loses nothing of its submodules: the worktree and each submodule are
// clean (untracked files included), and each submodule's HEAD commit is
// in the lead's copy of it (a commit made in a lot's submodule lives
// only in the worktree's own git dir). It returns why not.
func (g Git) submodulesKept(ctx context.Context, repo *spec.Repo, dir string) error {
	out, err := g.Run(ctx, dir, "status", "--porcelain=v1", "--ignore-submodules=none", "--untracked-files=all")
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "" {
		return fmt.Errorf("the worktree %s or one of its submodules has uncommitted changes: kept", dir)
	}
	common, err := g.Run(ctx, repo.Path, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return err
	}
	return g.submoduleCommitsKept(ctx, dir, repo.Path, filepath.Join(strings.TrimSpace(common), "modules"), 0)
}

// submoduleCommitsKept is submodulesKept's check of the commits, for the
// repository checked out at dir whose submodules the lead has under
// modules (or in the checkout at lead).
func (g Git) submoduleCommitsKept(ctx context.Context, dir, lead, modules string, depth int) error {
	subs, err := g.submodulesOf(ctx, dir)
	if err != nil || depth == maxSubmoduleDepth {
		return err
	}
	for _, s := range subs {
		sub := filepath.Join(dir, filepath.FromSlash(s.path))
		head, err := g.Run(ctx, sub, "rev-parse", "--verify", "--quiet", "HEAD")
		if err != nil {
			continue // not checked out: nothing of it to lose
		}
		head = strings.TrimSpace(head)
		src := filepath.Join(modules, filepath.FromSlash(s.name))
		nested := filepath.Join(src, "modules")
		if !isGitDir(src) {
			src = filepath.Join(lead, filepath.FromSlash(s.path))
			nested = filepath.Join(src, ".git", "modules")
		}
		if _, err := g.Run(ctx, src, "cat-file", "-e", head+"^{commit}"); err != nil {
			return fmt.Errorf("submodule %s of the worktree %s is at %s, a commit the lead's copy of it lacks: kept", s.path, dir, short12(head))
		}
		if err := g.submoduleCommitsKept(ctx, sub, filepath.Join(lead, filepath.FromSlash(s.path)), nested, depth+1); err != nil {
			return err
		}
	}
	return nil
}
