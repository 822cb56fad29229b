package transport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
)

// BaseRefPrefix is where a base bundle names its one ref:
// refs/cadence/base/<commit>.
const BaseRefPrefix = "refs/cadence/base/"

// lockPoll is how often BaseBundle tries again for the lock of a base
// bundle another caller is making.
const lockPoll = 50 * time.Millisecond

// BaseBundle returns the path of a complete bundle of baseCommit (a full
// object id of a commit of the repository at repoDir), naming one ref,
// refs/cadence/base/<baseCommit>: cacheDir/<baseCommit>.bundle, made once
// per commit and then shared by every lot on that base. Concurrent
// callers, in this process or others, make it once: the maker holds
// cacheDir/<baseCommit>.lock (flock) and writes the bundle to a temporary
// file it renames, so the path, once there, is always a whole bundle.
//
// The lead's repository is only read: the ref is made in a scratch
// repository under cacheDir that borrows the lead's objects
// (objects/info/alternates), removed once the bundle is written.
func (t *Transport) BaseBundle(ctx context.Context, repoDir, baseCommit, cacheDir string) (string, error) {
	if !isOID(baseCommit) {
		return "", fmt.Errorf("base commit %q: not a full object id", baseCommit)
	}
	got, err := t.commit(ctx, repoDir, baseCommit)
	if err != nil || got != baseCommit {
		return "", fmt.Errorf("base commit %s is no commit of %s: %v", baseCommit, repoDir, err)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(cacheDir, baseCommit+".bundle")
	if regular(path) {
		return path, nil
	}
	lock, err := flock.Open(filepath.Join(cacheDir, baseCommit+".lock"), 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := lockContext(ctx, lock); err != nil {
		return "", err
	}
	if regular(path) {
		return path, nil // made by the caller that held the lock
	}
	if err := t.makeBaseBundle(ctx, repoDir, baseCommit, cacheDir, path); err != nil {
		return "", fmt.Errorf("base bundle of %.12s: %w", baseCommit, err)
	}
	return path, nil
}

// makeBaseBundle writes the base bundle of commit to path through a
// scratch repository in a temporary folder of cacheDir.
func (t *Transport) makeBaseBundle(ctx context.Context, repoDir, commit, cacheDir, path string) error {
	common, err := t.git(ctx, repoDir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(cacheDir, ".base-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	scratch := filepath.Join(tmp, "scratch.git")
	if _, err := t.git(ctx, tmp, "init", "-q", "--bare", "--template=", scratch); err != nil {
		return err
	}
	alt := filepath.Join(scratch, "objects", "info", "alternates")
	if err := os.MkdirAll(filepath.Dir(alt), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(alt, []byte(filepath.Join(common, "objects")+"\n"), 0o644); err != nil {
		return err
	}
	ref := BaseRefPrefix + commit
	if _, err := t.git(ctx, scratch, "update-ref", ref, commit); err != nil {
		return err
	}
	out := filepath.Join(tmp, "base.bundle")
	if _, err := t.git(ctx, scratch, "bundle", "create", "-q", out, ref); err != nil {
		return err
	}
	return os.Rename(out, path)
}

// LotBundle writes to out a thin bundle of refs/heads/<branch> of the
// repository at repoDir above baseCommit (`git bundle create OUT
// refs/heads/<branch> ^<baseCommit>`): the lot's commits, which a worker
// fetches on top of the base bundle. A branch still at baseCommit (a lot
// that has not committed yet) gives the empty bundle (the package doc):
// the ref at baseCommit, no objects.
func (t *Transport) LotBundle(ctx context.Context, repoDir, branch, baseCommit, out string) error {
	_, err := t.thinBundle(ctx, repoDir, branch, baseCommit, out, 0)
	return err
}

// regular says whether path is a regular file (not a link).
func regular(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// lockContext takes lock's exclusive lock, trying every lockPoll until ctx
// ends (flock(2) itself cannot be cancelled).
func lockContext(ctx context.Context, lock *flock.File) error {
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		ok, err := lock.TryLock()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", lock.Path(), ctx.Err())
		case <-tick.C:
		}
	}
}
