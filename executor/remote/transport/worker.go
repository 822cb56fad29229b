package transport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SentRefPrefix is where Checkout keeps, in the worker's repository, the
// lot's head as the lead sent it: refs/cadence/sent/<branch>.
const SentRefPrefix = "refs/cadence/sent/"

// noHooksDir is the empty folder, inside the worker repository's git dir,
// that its core.hooksPath names.
const noHooksDir = "cadence/no-hooks"

// ErrNotDescendant is a branch that does not contain the commit it is
// measured from: its history was rewritten.
var ErrNotDescendant = errors.New("the branch does not descend from the commit sent")

// Checkout makes a fresh repository at dir (missing or an empty folder)
// from the bundles at base (BaseBundle's) and lot (LotBundle's), read by
// path, never as a URL: the base's ref refs/cadence/base/<commit>, the
// lot's head under refs/cadence/sent/<branch>, and refs/heads/<branch> at
// it, checked out. It returns the lot's head, the commit a result is
// measured from (ResultBundle's sentHead).
//
// What the repository does not have: a remote (there is nowhere to push
// to), hooks (`git init --template=` copies none, bundles carry none, and
// core.hooksPath names an empty folder of the git dir), configuration of
// the lead's (bundles carry none; the repository's config is git init's
// plus core.hooksPath).
//
// On an error, what Checkout made at dir is removed (dir included): a
// half-made repository is nobody's work.
func (t *Transport) Checkout(ctx context.Context, dir, base, lot, branch string) (head string, err error) {
	if err := t.checkBranch(ctx, branch); err != nil {
		return "", err
	}
	base, err = bundleFile(base)
	if err != nil {
		return "", err
	}
	lot, err = bundleFile(lot)
	if err != nil {
		return "", err
	}
	baseRef, err := t.oneRef(ctx, base)
	if err != nil {
		return "", err
	}
	if baseRef.Name != BaseRefPrefix+baseRef.OID {
		return "", fmt.Errorf("%s is not a base bundle: it names %s", base, baseRef.Name)
	}
	lotRef, err := t.oneRef(ctx, lot)
	if err != nil {
		return "", err
	}
	if lotRef.Name != "refs/heads/"+branch {
		return "", fmt.Errorf("%s is not the bundle of %s: it names %s", lot, branch, lotRef.Name)
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := emptyDir(dir); err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if _, err := t.git(ctx, dir, "init", "-q", "--template=", dir); err != nil {
		return "", err
	}
	hooks := filepath.Join(dir, ".git", noHooksDir)
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return "", err
	}
	if _, err := t.git(ctx, dir, "config", "--local", "core.hooksPath", hooks); err != nil {
		return "", err
	}
	if err := t.baseInto(ctx, dir, base, baseRef); err != nil {
		return "", fmt.Errorf("the base bundle: %w", err)
	}
	sent := SentRefPrefix + branch
	if err := t.fetch(ctx, dir, lot, lotRef.Name+":"+sent); err != nil {
		return "", fmt.Errorf("fetch the lot bundle: %w", err)
	}
	if _, err := t.git(ctx, dir, "checkout", "-q", "-b", branch, sent); err != nil {
		return "", err
	}
	return lotRef.OID, nil
}

// ResultBundle writes to out the thin bundle of the commits the worker
// made on refs/heads/<branch> of the repository at dir above sentHead
// (Checkout's head): `git bundle create OUT refs/heads/<branch>
// ^<sentHead>`, or the empty bundle (the package doc) when there are
// none. A branch that does not descend from sentHead is an error wrapping
// ErrNotDescendant and writes nothing (the lead would refuse it); a
// bundle above max bytes (max > 0, the cap the lead's Accept applies) is
// not written: a *TooLarge.
func (t *Transport) ResultBundle(ctx context.Context, dir, branch, sentHead, out string, max int64) error {
	if max <= 0 {
		return fmt.Errorf("result bundle cap %d: want a positive number of bytes", max)
	}
	ok, err := t.isAncestor(ctx, dir, sentHead, "refs/heads/"+branch)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s in %s: %w (%.12s)", branch, dir, ErrNotDescendant, sentHead)
	}
	_, err = t.thinBundle(ctx, dir, branch, sentHead, out, max)
	return err
}

// Checkpoint is ResultBundle: the bundle a worker uploads whenever HEAD
// moves (Head), so that a lost worker's successor resumes from it. The
// lead accepts a checkpoint as a result (Accept); the lot's next
// LotBundle then carries its commits.
func (t *Transport) Checkpoint(ctx context.Context, dir, branch, sentHead, out string, max int64) error {
	return t.ResultBundle(ctx, dir, branch, sentHead, out, max)
}

// Head returns the commit HEAD of the repository at dir is at, read from
// its files when they say (no git process), else from git.
func (t *Transport) Head(ctx context.Context, dir string) (string, error) {
	return t.Repos.Head(ctx, dir)
}

// oneRef returns the one ref the bundle at path names (`git bundle
// list-heads`); a bundle naming none or several is an error.
func (t *Transport) oneRef(ctx context.Context, path string) (Ref, error) {
	out, err := t.git(ctx, "", "bundle", "list-heads", path)
	if err != nil {
		return Ref{}, err
	}
	refs, err := parseListHeads(out)
	if err != nil {
		return Ref{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(refs) != 1 {
		return Ref{}, fmt.Errorf("%s names %d refs, not one", path, len(refs))
	}
	return refs[0], nil
}

// fetch fetches refspec from the bundle file at path (absolute) into the
// repository at dir: no tags, no FETCH_HEAD, no submodules.
func (t *Transport) fetch(ctx context.Context, dir, path, refspec string, config ...string) error {
	args := append(config, "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no", path, refspec)
	_, err := t.git(ctx, dir, args...)
	return err
}

// bundleFile returns path made absolute (so git reads it as a file, never
// as a URL), if it is a regular file.
func bundleFile(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if !regular(abs) {
		return "", fmt.Errorf("bundle %s: not a regular file", path)
	}
	return abs, nil
}

// emptyDir makes dir if it is missing; an existing dir must be an empty
// folder.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}
