package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HookMarker marks the pre-push hook cadence installs; a hook without it is
// foreign and never overwritten.
const HookMarker = "# cadence pre-push guard"

// Facts is what preflight learns about a repository.
type Facts struct {
	// Exists and IsGit say whether the path is there and is a repository.
	Exists, IsGit bool
	// BaseSHA is the commit of refs/heads/<base>, "" when there is none.
	BaseSHA string
	// Dirty lists tracked files with uncommitted changes (untracked files
	// are ignored).
	Dirty []string
	// CommonDir is the repository's git common dir (shared by worktrees).
	CommonDir string
	// ForeignPrePush is the path of a pre-push hook that is not cadence's.
	ForeignPrePush string
}

// Inspect gathers preflight facts about the repository at path.
func (g Git) Inspect(ctx context.Context, path, base string) (Facts, error) {
	var f Facts
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return f, nil
	}
	f.Exists = true
	top, err := g.Run(ctx, path, "rev-parse", "--show-toplevel")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode == 128 {
			return f, nil
		}
		return f, err
	}
	f.IsGit = true
	if filepath.Clean(strings.TrimSpace(top)) != filepath.Clean(path) {
		if real, err := filepath.EvalSymlinks(path); err != nil || filepath.Clean(strings.TrimSpace(top)) != real {
			return f, fmt.Errorf("%s is inside the repository %s, not its top folder", path, strings.TrimSpace(top))
		}
	}
	if out, err := g.Run(ctx, path, "rev-parse", "--verify", "--quiet", "refs/heads/"+base+"^{commit}"); err == nil {
		f.BaseSHA = strings.TrimSpace(out)
	}
	out, err := g.Run(ctx, path, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=none")
	if err != nil {
		return f, err
	}
	f.Dirty = parsePorcelainZ(out)
	if out, err = g.Run(ctx, path, "rev-parse", "--path-format=absolute", "--git-common-dir"); err == nil {
		f.CommonDir = strings.TrimSpace(out)
	}
	hook, err := g.hookPath(ctx, path, f.CommonDir)
	if err != nil {
		return f, err
	}
	if b, err := os.ReadFile(hook); err == nil && !strings.Contains(string(b), HookMarker) {
		f.ForeignPrePush = hook
	}
	return f, nil
}

// hookPath is where git looks for the pre-push hook, honouring core.hooksPath.
func (g Git) hookPath(ctx context.Context, repo, commonDir string) (string, error) {
	out, err := g.Run(ctx, repo, "config", "--get", "core.hooksPath")
	if err == nil && strings.TrimSpace(out) != "" {
		p := strings.TrimSpace(out)
		if strings.HasPrefix(p, "~/") {
			if home, herr := os.UserHomeDir(); herr == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(repo, p)
		}
		return filepath.Join(p, "pre-push"), nil
	}
	var ge *Error
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode == 1) {
		return "", err
	}
	return filepath.Join(commonDir, "hooks", "pre-push"), nil
}

// parsePorcelainZ reads `git status --porcelain=v1 -z` into paths; a rename
// names its new path.
func parsePorcelainZ(out string) []string {
	var files []string
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		e := fields[i]
		if len(e) < 4 {
			continue
		}
		files = append(files, e[3:])
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the source path follows
		}
	}
	return files
}

// OnBase says whether commit is the base branch of the repository at path
// or an ancestor of it (`git merge-base --is-ancestor`): what a done lot's
// integrated commit must be (docs/running.md, State and resume). A commit
// the repository does not have is not on it; err is git failing otherwise
// (a missing base branch included).
func (g Git) OnBase(ctx context.Context, path, base, commit string) (bool, error) {
	baseRef := "refs/heads/" + base
	if _, err := g.Run(ctx, path, "rev-parse", "--verify", "--quiet", baseRef+"^{commit}"); err != nil {
		return false, fmt.Errorf("the base %s: %w", base, err)
	}
	if _, err := g.Run(ctx, path, "cat-file", "-e", commit+"^{commit}"); err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode > 0 {
			return false, nil
		}
		return false, err
	}
	_, err := g.Run(ctx, path, "merge-base", "--is-ancestor", commit, baseRef)
	var ge *Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.ExitCode == 1:
		return false, nil
	}
	return false, err
}
