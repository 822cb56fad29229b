package gitint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/spec"
)

// Config guard (docs/integration.md, Guards, "Detection, always"): a repository's config is code
// for git (core.fsmonitor, core.sshCommand, filter drivers, alias.*,
// remote URLs), and a step may write it (`git config --file <common>/config`
// works from anywhere). cadence reads the config files of every repository
// a lot touches before each step, as bytes, with no git process, and
// compares them after the step, before any other git call it makes: a
// changed file is kept under <common>/cadence/rescue/<wave>/<lot>/config-<n>
// and put back (ConfigFiles, RestoreConfig). What git would run from the
// config in cadence's own calls is disabled where git allows (noHooks);
// the rest is what this check covers.

// ConfigFiles is a snapshot of a repository's config files, read from disk:
// <common>/config, <common>/config.worktree and every
// <common>/worktrees/<id>/config.worktree. An absent file is recorded
// absent (a file that appears is a change too).
type ConfigFiles struct {
	Common string
	Files  map[string]ConfigFile
}

// ConfigFile is one file's bytes and mode (Exists false: absent).
type ConfigFile struct {
	Exists bool
	Data   []byte
	Mode   fs.FileMode
}

// ConfigChange is what RestoreConfig did with one changed config file:
// Kept is where the step's version is kept ("" when the step deleted the
// file); Err says the file could not be put back.
type ConfigChange struct {
	Path string
	Kept string
	Err  error
}

// String says what happened, for an incident.
func (c ConfigChange) String() string {
	s := "the git config file " + c.Path + " was changed"
	if c.Kept != "" {
		s += " (the changed version is kept at " + c.Kept + ")"
	} else {
		s += " (deleted)"
	}
	if c.Err != nil {
		return s + "; it could NOT be put back: " + c.Err.Error()
	}
	return s + "; put back as it was before the step"
}

// configPaths lists the config files of the repository whose git common
// dir is common.
func configPaths(common string) []string {
	paths := []string{filepath.Join(common, "config"), filepath.Join(common, "config.worktree")}
	wts, _ := filepath.Glob(filepath.Join(globEscape(common), "worktrees", "*", "config.worktree"))
	return append(paths, wts...)
}

// ReadConfigFiles snapshots the config files of the repository whose git
// common dir is common (no git process). A file that cannot be read for
// another reason than its absence is an error.
func ReadConfigFiles(common string) (ConfigFiles, error) {
	s := ConfigFiles{Common: common, Files: map[string]ConfigFile{}}
	for _, p := range configPaths(common) {
		f, err := readConfigFile(p)
		if err != nil {
			return s, err
		}
		s.Files[p] = f
	}
	return s, nil
}

func readConfigFile(p string) (ConfigFile, error) {
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) {
		return ConfigFile{}, nil
	}
	if err != nil {
		return ConfigFile{}, err
	}
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return ConfigFile{}, nil
	}
	if err != nil {
		return ConfigFile{}, err
	}
	return ConfigFile{Exists: true, Data: b, Mode: fi.Mode()}, nil
}

// ConfigRescueDir is where the config files a lot's step changed are kept:
// <common>/cadence/rescue/<wave>/<lot>.
func ConfigRescueDir(common, wave, lot string) string {
	return filepath.Join(filepath.Dir(layout.RepoGuard(common)), "rescue", wave, lot)
}

// RestoreConfig compares the repository's config files now with before:
// each file that changed (its bytes or mode, or it appeared or went) is
// kept under ConfigRescueDir as config-<n> (the next free n) and put back
// as before, atomically (written aside and renamed, with its mode); a file
// that appeared is removed once kept. A worktrees/<id>/config.worktree
// whose worktree folder is gone is left gone (git removed the worktree).
func RestoreConfig(before ConfigFiles, wave, lot string) []ConfigChange {
	now, _ := ReadConfigFiles(before.Common)
	paths := map[string]bool{}
	for p := range before.Files {
		paths[p] = true
	}
	for p := range now.Files {
		paths[p] = true
	}
	var sorted []string
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var out []ConfigChange
	for _, p := range sorted {
		was, is := before.Files[p], now.Files[p]
		if !is.Exists {
			is, _ = readConfigFile(p) // not globbed now: read it
		}
		if sameConfig(was, is) {
			continue
		}
		if !is.Exists && filepath.Base(filepath.Dir(filepath.Dir(p))) == "worktrees" {
			if _, err := os.Stat(filepath.Dir(p)); os.IsNotExist(err) {
				continue
			}
		}
		c := ConfigChange{Path: p}
		if is.Exists {
			c.Kept, c.Err = keepConfig(before.Common, wave, lot, is)
		}
		if c.Err == nil {
			c.Err = putConfig(p, was)
		}
		out = append(out, c)
	}
	return out
}

// sameConfig says whether git reads a and b alike: the same bytes and
// mode, or both absent or an empty regular file. An empty file and an
// absent one configure nothing, and Claude Code's sandbox makes empty
// placeholders of the config files it protects that do not exist (every
// worktree's config.worktree) and removes them again, while
// other sessions of the repository run: neither is a change.
func sameConfig(a, b ConfigFile) bool {
	if nothing(a) && nothing(b) {
		return true
	}
	return a.Exists == b.Exists && string(a.Data) == string(b.Data) && a.Mode == b.Mode
}

// nothing says whether f configures nothing: absent, or an empty regular
// file.
func nothing(f ConfigFile) bool {
	return !f.Exists || f.Mode.IsRegular() && len(f.Data) == 0
}

// keepConfig writes f under the lot's rescue folder as config-<n>.
func keepConfig(common, wave, lot string, f ConfigFile) (string, error) {
	dir := ConfigRescueDir(common, wave, lot)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		p := filepath.Join(dir, fmt.Sprintf("config-%d", n))
		fh, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = fh.Write(f.Data)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		return p, err
	}
}

// putConfig puts the file at p back to f: written aside and renamed into
// place with its mode, or removed when it was absent.
func putConfig(p string, f ConfigFile) error {
	if !f.Exists {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".cadence-config-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(f.Data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(f.Mode.Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// GuardIntact says what is wrong with the guard folder of the repository
// whose git common dir is common ("" when intact): repo.config,
// lots.config, lead.config and the pre-push and reference-transaction
// hooks of hooks and lead-hooks must be there and carry GuardMarker. No
// git process.
func GuardIntact(common string) string {
	guard := layout.RepoGuard(common)
	var bad []string
	for _, f := range []string{"repo.config", "lots.config", "lead.config", filepath.Join("hooks", "pre-push"), filepath.Join("hooks", "reference-transaction"),
		filepath.Join("lead-hooks", "pre-push"), filepath.Join("lead-hooks", "reference-transaction")} {
		b, err := os.ReadFile(filepath.Join(guard, f))
		if err != nil || !strings.Contains(string(b), GuardMarker) {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("cadence's guard %s was tampered with (%s missing or not cadence's)", guard, strings.Join(bad, ", "))
}

// RepairGuard reinstalls the guard of the repository at repo when
// GuardIntact finds it damaged, keeping the lot worktrees' entries that
// are left (InstallGuard makes the folder afresh; the witness this process
// runs keeps listening, with what it recorded), and says what was wrong
// ("" when it was intact).
func (g Git) RepairGuard(ctx context.Context, repo string) (string, error) {
	common, err := g.commonDir(ctx, repo)
	if err != nil {
		return "", err
	}
	what := GuardIntact(common)
	if what == "" {
		return "", nil
	}
	guard := layout.RepoGuard(common)
	entries := map[string][]byte{}
	des, _ := os.ReadDir(filepath.Join(guard, "worktrees"))
	for _, de := range des {
		if b, err := os.ReadFile(filepath.Join(guard, "worktrees", de.Name())); err == nil && strings.Contains(string(b), GuardMarker) {
			entries[de.Name()] = b
		}
	}
	if _, err := g.InstallGuard(ctx, repo); err != nil {
		return what, err
	}
	m := guardLock(common)
	m.Lock()
	defer m.Unlock()
	for name, b := range entries {
		if err := os.WriteFile(filepath.Join(guard, "worktrees", name), b, 0o644); err != nil {
			return what, err
		}
	}
	return what, writeLots(guard, common)
}

// commons caches each repository's git common dir (commonDir), so that
// the check after a step reads files only and a wave asks git once per
// repository.
var commons sync.Map // repo path -> common dir

// ConfigFiles implements the executor's view: the snapshot of the
// repository's config files (ReadConfigFiles), its common dir asked of git
// once per repository.
func (g *Repos) ConfigFiles(ctx context.Context, repo *spec.Repo) (ConfigFiles, error) {
	common, err := g.commonDir(ctx, repo.Path)
	if err != nil {
		return ConfigFiles{}, err
	}
	return ReadConfigFiles(common)
}

// RestoreConfig implements the executor's view (RestoreConfig).
func (g *Repos) RestoreConfig(before ConfigFiles, wave, lot string) []ConfigChange {
	return RestoreConfig(before, wave, lot)
}

// GuardIntact implements the executor's view (GuardIntact).
func (g *Repos) GuardIntact(before ConfigFiles) string { return GuardIntact(before.Common) }

// RepairGuard implements the executor's view (RepairGuard).
func (g *Repos) RepairGuard(ctx context.Context, repo *spec.Repo) (string, error) {
	return g.Git.RepairGuard(ctx, repo.Path)
}
