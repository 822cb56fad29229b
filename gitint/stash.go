package gitint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// The stash (docs/integration.md, Guards): the entries of refs/stash are
// the entries of its reflog (<common>/logs/refs/stash), shared by the
// repository's checkout and every worktree. A step may stash and pop in
// its worktree; an entry that was there before the step and is gone after
// it (`git stash clear`, `git stash drop`, `git reflog expire`) was not
// the step's and is put back (RestoreStash).

// StashEntry is one entry of the stash: its commit and its message.
type StashEntry struct {
	Commit, Message string
}

// StashPutBack is what RestoreStash did with one entry: Err says why it
// could not be put back (its commit is gone: `git gc --prune`).
type StashPutBack struct {
	StashEntry
	Err error
}

// String says what happened, for an incident.
func (p StashPutBack) String() string {
	s := fmt.Sprintf("the stash entry %s (%q) was dropped", short12(p.Commit), p.Message)
	if p.Err != nil {
		return s + "; it could NOT be put back: " + p.Err.Error()
	}
	return s + "; put back on top of the stash"
}

// errNoStashFiles says the stash's reflog cannot be read from files (not
// the files backend, or no git dir found).
var errNoStashFiles = errors.New("the stash cannot be read from the repository's files")

// ReadStash reads the stash entries of the repository at repo from its
// reflog file, oldest first (no git process); none when it has no stash.
func ReadStash(repo string) ([]StashEntry, error) {
	_, common, ok := gitDirs(repo)
	if !ok || !filesBackend(common) {
		return nil, errNoStashFiles
	}
	b, err := os.ReadFile(filepath.Join(common, "logs", "refs", "stash"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseStashLog(string(b)), nil
}

// parseStashLog reads reflog lines "<old> <new> <who> <when>\t<message>":
// each entry is <new> with its message.
func parseStashLog(log string) []StashEntry {
	var out []StashEntry
	for _, line := range strings.Split(log, "\n") {
		head, msg, _ := strings.Cut(line, "\t")
		f := strings.Fields(head)
		if len(f) < 2 || len(f[1]) < 40 || strings.Trim(f[1], "0") == "" {
			continue
		}
		out = append(out, StashEntry{Commit: f[1], Message: msg})
	}
	return out
}

// MissingStash lists the entries of before that are not in after (by
// commit), oldest first.
func MissingStash(before, after []StashEntry) []StashEntry {
	now := map[string]bool{}
	for _, e := range after {
		now[e.Commit] = true
	}
	var out []StashEntry
	for _, e := range before {
		if !now[e.Commit] {
			out = append(out, e)
		}
	}
	return out
}

// RestoreStash puts each entry back on top of the stash of the repository
// at repo, oldest first, with `git update-ref --create-reflog -m <message>
// refs/stash <commit>` (what `git stash store` does); an entry whose commit
// is gone is reported, not put back. Call it with the repository's write
// lock held.
func (g Git) RestoreStash(ctx context.Context, repo string, entries []StashEntry) []StashPutBack {
	out := make([]StashPutBack, 0, len(entries))
	for _, e := range entries {
		p := StashPutBack{StashEntry: e}
		if _, err := g.Run(ctx, repo, "cat-file", "-e", e.Commit+"^{commit}"); err != nil {
			p.Err = fmt.Errorf("its commit %s is gone", short12(e.Commit))
		} else if _, err := g.Run(ctx, repo, "update-ref", "--create-reflog", "-m", e.Message, "refs/stash", e.Commit); err != nil {
			p.Err = err
		}
		out = append(out, p)
	}
	return out
}

// Stash implements the executor's view (ReadStash).
func (g *Repos) Stash(ctx context.Context, repo *spec.Repo) ([]StashEntry, error) {
	return ReadStash(repo.Path)
}

// RestoreStash implements the executor's view (RestoreStash), under the
// repository's write lock.
func (g *Repos) RestoreStash(ctx context.Context, repo *spec.Repo, entries []StashEntry) []StashPutBack {
	m := g.lock(repo.Path)
	m.Lock()
	defer m.Unlock()
	return g.Git.RestoreStash(ctx, repo.Path, entries)
}
