package gitint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/spec"
)

// Hook guard (docs/integration.md, Guards): a hook is code git runs in the
// lots' commits and in the lead's own, and a step may plant one (the hooks
// folder of the git common dir is writable from any worktree). cadence
// reads the repository's hooks folders before each step, as bytes, with no
// git process, and compares them after the step, with the config and
// before any other git call it makes: a planted or changed hook is set
// aside under <common>/cadence/rescue/<wave>/<lot>/hook-<n>-<name> (never
// deleted) and the hook as it was put back (HookFiles, RestoreHooks).
// The folders are <common>/hooks and the target of the repository's own
// core.hooksPath when it is an absolute path (a relative one is in each
// worktree: the lot's own tracked files); cadence's guard folder is
// GuardIntact's.

// HookFiles is a snapshot of the files of a repository's hooks folders
// (path → file; an absent file is not recorded), and the folders read.
type HookFiles struct {
	Common string
	Dirs   []string
	Files  map[string]ConfigFile
}

// HookChange is what RestoreHooks did with one hook: Was and Is say
// whether it existed before and after the step; Kept is where the step's
// version was set aside ("" when the step deleted it); Err says it could
// not be set aside or put back.
type HookChange struct {
	Path    string
	Was, Is bool
	Kept    string
	Err     error
}

// String says what happened, for an incident.
func (c HookChange) String() string {
	var s string
	switch {
	case !c.Was:
		s = "the hook " + c.Path + " was planted"
	case !c.Is:
		s = "the hook " + c.Path + " was deleted"
	default:
		s = "the hook " + c.Path + " was changed"
	}
	if c.Kept != "" {
		s += " (set aside at " + c.Kept + ")"
	}
	if c.Err != nil {
		return s + "; it could NOT be put back: " + c.Err.Error()
	}
	if !c.Was {
		return s + "; it no longer runs"
	}
	return s + "; put back as it was before the step"
}

// ReadHooks snapshots the hooks of the hooks folders dirs of the
// repository whose git common dir is common (no git process): each
// folder's files named as a hook git knows (hookNames: git runs
// <folder>/<name>, never a .sample), not its subfolders. A
// folder that is absent has no files; one that cannot be read is an
// error.
func ReadHooks(common string, dirs []string) (HookFiles, error) {
	h := HookFiles{Common: common, Dirs: dirs, Files: map[string]ConfigFile{}}
	for _, d := range dirs {
		des, err := os.ReadDir(d)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return h, err
		}
		for _, de := range des {
			if de.IsDir() || !slices.Contains(hookNames, de.Name()) {
				continue // git runs no other file of the folder
			}
			p := filepath.Join(d, de.Name())
			f, err := readConfigFile(p)
			if err != nil {
				return h, err
			}
			if f.Exists {
				h.Files[p] = f
			}
		}
	}
	return h, nil
}

// RestoreHooks compares the hooks folders now with before: each file that
// appeared or changed (bytes or mode) is moved aside to ConfigRescueDir as
// hook-<n>-<name> (the next free n; renamed, or copied when it cannot be),
// and a file that changed or went is put back as before (written aside
// and renamed, with its mode).
func RestoreHooks(before HookFiles, wave, lot string) []HookChange {
	now, _ := ReadHooks(before.Common, before.Dirs)
	paths := map[string]bool{}
	for p := range before.Files {
		paths[p] = true
	}
	for p := range now.Files {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var out []HookChange
	for _, p := range sorted {
		was, is := before.Files[p], now.Files[p]
		if sameConfig(was, is) {
			continue // an empty file, like an absent one, runs nothing
		}
		c := HookChange{Path: p, Was: was.Exists, Is: is.Exists}
		if is.Exists {
			c.Kept, c.Err = setHookAside(before.Common, wave, lot, p)
		}
		if c.Err == nil && was.Exists {
			c.Err = putConfig(p, was)
		}
		out = append(out, c)
	}
	return out
}

// setHookAside moves the hook at p to the lot's rescue folder as
// hook-<n>-<name>, never overwriting a file there.
func setHookAside(common, wave, lot, p string) (string, error) {
	dir := ConfigRescueDir(common, wave, lot)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		dst := filepath.Join(dir, fmt.Sprintf("hook-%d-%s", n, filepath.Base(p)))
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		// A link to dst made first reserves the name without overwriting
		// (os.Link fails on an existing file); the hook then leaves its
		// folder. Across file systems, the hook is copied, then removed.
		if err := os.Link(p, dst); err == nil {
			return dst, os.Remove(p)
		} else if os.IsExist(err) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fh, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = fh.Write(b)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return dst, err
		}
		return dst, os.Remove(p)
	}
}

// hookDirs caches each repository's hooks folders (repo path → []string).
var hookDirs sync.Map

// hooksDirs are the hooks folders of the repository at repo, whose git
// common dir is common: <common>/hooks and the repository's own
// core.hooksPath when absolute and not cadence's guard (ownHooksPath).
func (g Git) hooksDirs(ctx context.Context, repo, common string) []string {
	if d, ok := hookDirs.Load(repo); ok {
		return d.([]string)
	}
	dirs := []string{filepath.Join(common, "hooks")}
	if own := g.ownHooksPath(ctx, repo, layout.RepoGuard(common)); filepath.IsAbs(own) && !strings.HasPrefix(own, layout.RepoGuard(common)) {
		dirs = append(dirs, filepath.Clean(own))
	}
	hookDirs.Store(repo, dirs)
	return dirs
}

// Hooks implements the executor's view: the snapshot of the repository's
// hooks folders (ReadHooks), its folders asked of git once per
// repository.
func (g *Repos) Hooks(ctx context.Context, repo *spec.Repo) (HookFiles, error) {
	common, err := g.commonDir(ctx, repo.Path)
	if err != nil {
		return HookFiles{}, err
	}
	return ReadHooks(common, g.hooksDirs(ctx, repo.Path, common))
}

// RestoreHooks implements the executor's view (RestoreHooks).
func (g *Repos) RestoreHooks(before HookFiles, wave, lot string) []HookChange {
	return RestoreHooks(before, wave, lot)
}
