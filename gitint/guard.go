package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/layout"
)

// The guard of a repository is a folder cadence owns in the repository's
// git common dir, there while a wave runs (layout.RepoGuard):
//
//	<common>/cadence/guard/
//	  hooks/<name>                  pre-push, reference-transaction, and a shim
//	                                per hook the repository runs itself
//	                                (hookScript, ownHookNames)
//	  bin/git-remote-cadence-no-push the helper refused pushes end in
//	  repo.config                   the guard config (guardConfig)
//	  lots.config                   includeIf entries, one per lot worktree
//	  worktrees/<id>.config         a lot worktree's entry: repo.config and
//	                                its wave, lot and branch
//
// and one entry in the repository's config (<common>/config), written with
// git config: includeIf "gitdir:<common>/worktrees/" path = lots.config.
// lots.config names each lot worktree's own git dir exactly
// (<common>/worktrees/<id>), so the guard config reaches every git process
// that works in a lot worktree, whatever its environment (`env -u`), and
// never the lead's checkout nor any other worktree. The step environment
// (PushBlockEnv) adds the same config for every worktree of the repository
// (`git -C <the lead's checkout>` from a step) and blocks pushes to the
// repository's remote URLs from anywhere.

// guardLocks serialises the writes to one guard folder within the process
// (several lots of a repository start at once); one wave per repository
// (the repository lock) keeps other processes out.
var guardLocks sync.Map // common dir -> *sync.Mutex

func guardLock(common string) *sync.Mutex {
	m, _ := guardLocks.LoadOrStore(common, &sync.Mutex{})
	return m.(*sync.Mutex)
}

// commonDir returns the repository's git common dir, absolute, with
// symbolic links resolved (git matches includeIf gitdir against both),
// asked of git once per repository path and process (commons).
func (g Git) commonDir(ctx context.Context, repo string) (string, error) {
	if c, ok := commons.Load(repo); ok {
		return c.(string), nil
	}
	out, err := g.Run(ctx, repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	c := filepath.Clean(strings.TrimSpace(out))
	if real, err := filepath.EvalSymlinks(c); err == nil {
		c = real
	}
	if strings.ContainsAny(c, "\n\r") {
		return "", fmt.Errorf("%s: a git folder whose path has a line break cannot be guarded", repo)
	}
	commons.Store(repo, c)
	return c, nil
}

// InstallGuard installs cadence's guard in the repository at repo (see
// above) and returns its removal (RemoveGuardDir). The repository's own
// files are never touched: its hooks folder, its core.hooksPath, a hook of
// its own (which lots still run, chained), its remotes. Only its config
// gains the one include entry. A guard left by a killed cadence (the folder
// and the entry, or a legacy pre-push hook of older versions) is taken
// over: made afresh. The caller holds the repository's lock (one wave per
// repository).
func (g Git) InstallGuard(ctx context.Context, repo string) (func() error, error) {
	common, err := g.commonDir(ctx, repo)
	if err != nil {
		return nil, err
	}
	remotes, err := g.remoteURLs(ctx, repo)
	if err != nil {
		return nil, err
	}
	m := guardLock(common)
	m.Lock()
	defer m.Unlock()
	if hook, ours, err := g.GuardHook(ctx, repo); err == nil && ours {
		_ = RemoveGuard(hook)
	}
	guard := layout.RepoGuard(common)
	if err := os.MkdirAll(filepath.Dir(guard), 0o755); err != nil {
		return nil, err
	}
	// Made aside and renamed into place: a cadence killed here leaves a
	// whole guard or none (and a .new folder the next install removes).
	tmp, err := os.MkdirTemp(filepath.Dir(guard), "guard.new-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := writeGuard(tmp, guard, common, g.ownHooksPath(ctx, repo, guard), g.WitnessClient, remotes); err != nil {
		return nil, fmt.Errorf("write the guard of %s: %w", repo, err)
	}
	if err := os.RemoveAll(guard); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, guard); err != nil {
		return nil, err
	}
	removeStaleNew(filepath.Dir(guard))
	if _, err := startWitness(common, guardOwner()); err != nil {
		_ = os.RemoveAll(guard)
		return nil, fmt.Errorf("start the witness of the lead's moves in %s: %w", repo, err)
	}
	if err := g.addInclude(ctx, common); err != nil {
		stopWitness(common)
		_ = os.RemoveAll(guard)
		return nil, fmt.Errorf("include the guard in the config of %s: %w", repo, err)
	}
	return func() error {
		stopWitness(common)
		return g.RemoveGuardDir(context.WithoutCancel(ctx), common)
	}, nil
}

// ownHooksPath is the last core.hooksPath git reports for the repository
// that is not cadence's hooks folder (guard/hooks), as `git config --path`
// gives it (`~/` expanded; a relative path stays relative: git runs hooks
// at the worktree's top); "" when none, and the hooks folder of the git
// dir is the repository's.
func (g Git) ownHooksPath(ctx context.Context, repo, guard string) string {
	out, _ := g.Run(ctx, repo, "config", "--path", "--get-all", "core.hooksPath")
	own := ""
	for _, p := range strings.Split(strings.TrimSpace(out), "\n") {
		if p != "" && p != filepath.Join(guard, "hooks") && p != filepath.Join(guard, "lead-hooks") {
			own = p
		}
	}
	return own
}

// writeGuard writes the guard folder's files into dir, for the folder's
// final place guard; ownHooks is where the repository's own hooks are
// (ownHooksPath).
func writeGuard(dir, guard, common, ownHooks, client string, remotes []remoteURL) error {
	for _, sub := range []string{"hooks", "bin", "worktrees"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	own := ownHookNames(common, ownHooks)
	for _, name := range hookNames {
		if !own[name] && name != "pre-push" && name != "reference-transaction" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "hooks", name), []byte(hookScript(guard, common, ownHooks, name, own[name])), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "git-remote-"+noPushScheme), []byte(pushHelper(guard, common)), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "repo.config"), []byte(guardConfig(guard, remotes)), 0o644); err != nil {
		return err
	}
	if err := writeLeadSide(dir, guard, common, ownHooks, client); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "lots.config"), []byte(lotsHeader(guard)), 0o644)
}

// lotsHeader starts lots.config: its marker, then the include of
// lead.config, which every linked worktree reads first (a lot worktree's
// own entry, after it, sets cadence's lot hooks instead).
func lotsHeader(guard string) string {
	return fmt.Sprintf("%s: the lot worktrees (removed when the wave ends; see cadence clean)\n[include]\n\tpath = %s\n",
		GuardMarker, cfgQuote(filepath.Join(guard, "lead.config")))
}

// removeStaleNew removes guard.new-* folders a killed install left.
func removeStaleNew(dir string) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), "guard.new-") {
			_ = os.RemoveAll(filepath.Join(dir, de.Name()))
		}
	}
}

// RemoveGuardDir removes cadence's guard of the repository whose git common
// dir is common: the include entry in its config, then the guard folder,
// and the witness's socket file unless this process's witness listens
// there. Nothing there is no error.
func (g Git) RemoveGuardDir(ctx context.Context, common string) error {
	m := guardLock(common)
	m.Lock()
	defer m.Unlock()
	err := g.removeInclude(ctx, common)
	if rerr := os.RemoveAll(layout.RepoGuard(common)); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if serr := removeStaleSocket(common); serr != nil {
		err = errors.Join(err, serr)
	}
	removeStaleNew(filepath.Dir(layout.RepoGuard(common)))
	return err
}

// RemoveLeftGuard removes the guard a killed cadence left in the
// repository at repo (the guard folder and its config entries, or a legacy
// pre-push hook) and reports whether there was one. A path git cannot read
// as a repository has none. The caller holds the repository's lock
// (layout.RepoLock): a guard under another wave's lock is that wave's.
func (g Git) RemoveLeftGuard(ctx context.Context, repo string) (bool, error) {
	common, err := g.commonDir(ctx, repo)
	if err != nil {
		return false, nil
	}
	removed := false
	if hook, ours, err := g.GuardHook(ctx, repo); err == nil && ours {
		if err := RemoveGuard(hook); err != nil {
			return false, err
		}
		removed = true
	}
	if !g.GuardInstalled(ctx, common) {
		return removed, nil
	}
	return true, g.RemoveGuardDir(ctx, common)
}

// GuardInstalled reports whether the repository whose git common dir is
// common has cadence's guard (its folder or its include entry): during a
// wave, or left by a killed one.
func (g Git) GuardInstalled(ctx context.Context, common string) bool {
	if _, err := os.Stat(layout.RepoGuard(common)); err == nil {
		return true
	}
	for _, e := range includeEntries(common) {
		if out, _ := g.Run(ctx, common, "config", "--file", filepath.Join(common, "config"), "--get-all", e[0]); strings.TrimSpace(out) != "" {
			return true
		}
	}
	return false
}

// includeKey is the config key of cadence's entry in the repository's
// config: includeIf.gitdir:<common>/worktrees/.path, matching linked
// worktrees only (lots.config then picks the lots' own, exactly).
func includeKey(common string) string {
	return "includeIf.gitdir:" + globEscape(common) + "/worktrees/.path"
}

// includeEntries are cadence's entries in the repository's config: key →
// the file it includes (lots.config for linked worktrees, lead.config for
// the main worktree).
func includeEntries(common string) [][2]string {
	guard := layout.RepoGuard(common)
	return [][2]string{
		{includeKey(common), filepath.Join(guard, "lots.config")},
		{leadIncludeKey(common), filepath.Join(guard, "lead.config")},
	}
}

// addInclude adds cadence's entries to the repository's config, once each.
func (g Git) addInclude(ctx context.Context, common string) error {
	for _, e := range includeEntries(common) {
		if err := g.addIncludeEntry(ctx, common, e[0], e[1]); err != nil {
			return err
		}
	}
	return nil
}

// addIncludeEntry adds key = val to the repository's config, once.
func (g Git) addIncludeEntry(ctx context.Context, common, key, val string) error {
	cfg := filepath.Join(common, "config")
	if out, err := g.gitConfig(ctx, common, "--file", cfg, "--fixed-value", "--get-all", key, val); err == nil && strings.TrimSpace(out) != "" {
		return nil
	}
	_, err := g.gitConfig(ctx, common, "--file", cfg, "--add", key, val)
	return err
}

// removeInclude removes cadence's entries from the repository's config,
// and each one's section when nothing else is left in it.
func (g Git) removeInclude(ctx context.Context, common string) error {
	var errs []error
	for _, e := range includeEntries(common) {
		errs = append(errs, g.removeIncludeEntry(ctx, common, e[0], e[1]))
	}
	return errors.Join(errs...)
}

// removeIncludeEntry removes key = val from the repository's config, and
// its section when nothing else is left in it.
func (g Git) removeIncludeEntry(ctx context.Context, common, key, val string) error {
	cfg := filepath.Join(common, "config")
	if _, err := os.Stat(cfg); err != nil {
		return nil
	}
	if _, err := g.gitConfig(ctx, common, "--file", cfg, "--fixed-value", "--unset-all", key, val); err != nil && !isExit(err, 5) {
		return err
	}
	names, err := g.gitConfig(ctx, common, "--file", cfg, "--name-only", "--list")
	if err != nil {
		return err
	}
	section := strings.TrimSuffix(key, ".path")
	prefix := "includeif" + strings.TrimPrefix(section, "includeIf") + "."
	for _, n := range strings.Split(names, "\n") {
		if strings.HasPrefix(n, prefix) {
			return nil // someone else's key in the same section: kept
		}
	}
	if _, err := g.gitConfig(ctx, common, "--file", cfg, "--remove-section", section); err != nil && !isExit(err, 128) {
		return err
	}
	return nil
}

// gitConfig runs git config, trying again a few times while another git
// holds the config's lock (git fails at once then).
func (g Git) gitConfig(ctx context.Context, dir string, args ...string) (string, error) {
	for try := 0; ; try++ {
		out, err := g.Run(ctx, dir, append([]string{"config"}, args...)...)
		var ge *Error
		if err == nil || try == 20 || !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "could not lock config file") {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func isExit(err error, code int) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.ExitCode == code
}

// globEscape escapes the wildmatch characters of a path for an includeIf
// gitdir pattern.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cfgQuote quotes a value or subsection name for a git config file.
func cfgQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`).Replace(s) + `"`
}

// remoteURL is one url or pushurl of a remote.
type remoteURL struct {
	Remote string
	Push   bool // a pushurl
	URL    string
}

// remoteURLs lists the URLs and push URLs of the repository's remotes.
func (g Git) remoteURLs(ctx context.Context, repo string) ([]remoteURL, error) {
	out, err := g.Run(ctx, repo, "config", "-z", "--get-regexp", `^remote\..*\.(url|pushurl)$`)
	if err != nil && !isExit(err, 1) {
		return nil, err
	}
	var urls []remoteURL
	for _, e := range strings.Split(out, "\x00") {
		k, v, ok := strings.Cut(e, "\n")
		if !ok || strings.ContainsAny(v, "\n\r") {
			continue
		}
		name := strings.TrimPrefix(k, "remote.")
		switch {
		case strings.HasSuffix(name, ".pushurl"):
			urls = append(urls, remoteURL{Remote: strings.TrimSuffix(name, ".pushurl"), Push: true, URL: v})
		case strings.HasSuffix(name, ".url"):
			urls = append(urls, remoteURL{Remote: strings.TrimSuffix(name, ".url"), URL: v})
		}
	}
	return urls, nil
}

// guardConfig is repo.config, the config of every git process working in a
// lot worktree of the repository (and, from a step, in any of its
// worktrees):
//   - core.hooksPath: cadence's hooks (pre-push refuses,
//     reference-transaction refuses foreign ref updates, the rest chain);
//   - an empty url.cadence-no-push::.pushInsteadOf, which sends every push
//     without a push URL (a remote's URL, an absolute path, a file:// or
//     https URL) to cadence's helper, which refuses it; fetches are left
//     alone;
//   - remote.<name>.pushurl = cadence-no-push::<name> for every remote;
//   - url.cadence-no-push::<P>.insteadOf = <P> for a push URL P of the
//     repository's own (git pushes to every push URL of a remote, and
//     pushInsteadOf does not apply to them), unless P begins a fetch URL
//     (then rewriting it would break fetches: the hook and the detection
//     are left);
//   - protocol.ext.allow = never.
func guardConfig(guard string, remotes []remoteURL) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the config of lot worktrees (removed when the wave ends; see cadence clean)\n", GuardMarker)
	fmt.Fprintf(&b, "[core]\n\thooksPath = %s\n", cfgQuote(filepath.Join(guard, "hooks")))
	fmt.Fprintf(&b, "[protocol \"ext\"]\n\tallow = never\n")
	fmt.Fprintf(&b, "[url %s]\n\tpushInsteadOf = \"\"\n", cfgQuote(noPushScheme+"::"))
	seen := map[string]bool{}
	for _, r := range remotes {
		if !r.Push || seen[r.URL] || beginsFetchURL(r.URL, remotes) {
			continue
		}
		seen[r.URL] = true
		fmt.Fprintf(&b, "[url %s]\n\tinsteadOf = %s\n", cfgQuote(noPushScheme+"::"+r.URL), cfgQuote(r.URL))
	}
	var names []string
	for _, r := range remotes {
		if !seen["remote "+r.Remote] {
			seen["remote "+r.Remote] = true
			names = append(names, r.Remote)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "[remote %s]\n\tpushurl = %s\n", cfgQuote(n), cfgQuote(noPushScheme+"::"+n))
	}
	return b.String()
}

// beginsFetchURL says whether p is a prefix of a fetch URL of a remote.
func beginsFetchURL(p string, remotes []remoteURL) bool {
	for _, r := range remotes {
		if !r.Push && strings.HasPrefix(r.URL, p) {
			return true
		}
	}
	return false
}
