package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/internal/flock"
)

// baseInto brings the base bundle at base (absolute), whose one ref is
// ref, into the fresh repository at dir: ref at its commit, with its
// objects. Without a BaseCache it fetches the bundle (git indexes the
// whole pack: most of a checkout's time on a big repository). With one,
// the base's objects are indexed once per commit into a bare repository
// of the cache (cachedBase), and each checkout gets a copy of its pack
// files: a copy, never a hard link, so that a step writing into its
// repository's objects cannot reach the cache or another lot's.
func (t *Transport) baseInto(ctx context.Context, dir, base string, ref Ref) error {
	if t.BaseCache == "" {
		return t.fetch(ctx, dir, base, ref.Name+":"+ref.Name)
	}
	cached, err := t.cachedBase(ctx, base, ref)
	if err != nil {
		return err
	}
	packs, err := filepath.Glob(filepath.Join(cached, "objects", "pack", "pack-*.pack"))
	if err != nil {
		return err
	}
	dst := filepath.Join(dir, ".git", "objects", "pack")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, pack := range packs {
		// the index last: git looks for packs by their index
		stem := strings.TrimSuffix(pack, ".pack")
		for _, ext := range []string{".pack", ".rev", ".idx"} {
			err := copyFile(stem+ext, filepath.Join(dst, filepath.Base(stem)+ext))
			if err != nil && !(ext == ".rev" && errors.Is(err, os.ErrNotExist)) {
				return err
			}
		}
	}
	if _, err := t.git(ctx, dir, "update-ref", ref.Name, ref.OID); err != nil {
		return fmt.Errorf("the cached base %s: %w", cached, err)
	}
	return nil
}

// cachedBase returns the bare repository BaseCache/<commit>.git holding
// the base bundle's objects (its ref included), made once per commit:
// under the lock BaseCache/<commit>.lock, in a temporary folder renamed
// into place, so a repository there is always whole. Nothing here removes
// one; a worker's cache is its own to empty.
func (t *Transport) cachedBase(ctx context.Context, base string, ref Ref) (string, error) {
	if err := os.MkdirAll(t.BaseCache, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(t.BaseCache, ref.OID+".git")
	if isDir(path) {
		return path, nil
	}
	lock, err := flock.Open(filepath.Join(t.BaseCache, ref.OID+".lock"), 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := lockContext(ctx, lock); err != nil {
		return "", err
	}
	if isDir(path) {
		return path, nil
	}
	tmp, err := os.MkdirTemp(t.BaseCache, ".base-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	repo := filepath.Join(tmp, "base.git")
	if _, err := t.git(ctx, tmp, "init", "-q", "--bare", "--template=", repo); err != nil {
		return "", err
	}
	if err := t.fetch(ctx, repo, base, ref.Name+":"+ref.Name); err != nil {
		return "", err
	}
	if err := os.Rename(repo, path); err != nil {
		return "", err
	}
	return path, nil
}

// copyFile copies the regular file from to a new file to.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
