package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/spec"
)

func runClean(e *env, args []string) int {
	fs := newFlags(e, "clean", "[FILE]", "Remove what a finished or abandoned wave left in its repositories: lot worktrees,\nlot branches, and a leftover push guard. Never a worktree with uncommitted changes, nor\na branch (or its worktree) holding commits that are not in the base, nor a backup ref\n(refs/cadence/backup/…, the commits of an earlier attempt: listed, never removed). Shows\nwhat it would do unless -dry-run=false.")
	dry := fs.Bool("dry-run", true, "only show what would be removed")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	file, ok := oneFile(e, "clean", pos)
	if !ok {
		return ExitError
	}
	w, diags := loadWave(file, spec.Options{})
	if diags.HasErrors() {
		e.writeDiags(e.stderr, diags, w.loader.Files, false)
		return ExitError
	}
	lay := e.layoutOf(file, w.cfg.Wave.Name)
	l, err := flock.TryAcquire(lay.Lock(), flock.Holder{PID: os.Getpid(), Wave: w.cfg.Wave.Name, What: "clean", Since: time.Now()})
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence clean: the wave is running (%v): clean when it stops\n", err)
		return ExitError
	}
	defer l.Release()
	ctx := context.Background()
	root := lay.Abs().WorktreeRoot()
	g := gitint.NewRepos()
	status := ExitOK
	found := 0
	for _, repo := range w.cfg.Repos {
		if f, err := gitint.Inspect(ctx, repo.Path, repo.Base); err != nil || !f.IsGit {
			continue
		}
		gitint.Prune(ctx, repo.Path)
		lefts, err := gitint.Leftovers(ctx, repo, w.cfg.Wave.Name, root)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence clean: repo %s: %v\n", repo.Name, err)
			status = ExitError
			continue
		}
		// Worktrees before branches: a checked-out branch cannot go.
		for _, kind := range []string{"worktree", "guard", "hook", "branch", "backup"} {
			for _, lo := range lefts {
				if lo.Kind != kind {
					continue
				}
				found++
				switch {
				case lo.Keep != "":
					fmt.Fprintf(e.stdout, "keep    %s %s %s: %s\n", repo.Name, lo.Kind, lo.Path, lo.Keep)
				case *dry:
					fmt.Fprintf(e.stdout, "remove  %s %s %s\n", repo.Name, lo.Kind, lo.Path)
				default:
					if err := g.RemoveLeftover(ctx, repo, lo); err != nil {
						fmt.Fprintf(e.stdout, "keep    %s %s %s: %v\n", repo.Name, lo.Kind, lo.Path, err)
						status = ExitError
						continue
					}
					fmt.Fprintf(e.stdout, "removed %s %s %s\n", repo.Name, lo.Kind, lo.Path)
				}
			}
		}
	}
	switch {
	case found == 0:
		fmt.Fprintf(e.stdout, "Nothing to clean for wave %q.\n", w.cfg.Wave.Name)
	case *dry:
		fmt.Fprintln(e.stdout, "\nDry run: nothing was removed. cadence clean -dry-run=false "+file+" removes what is marked remove.")
	}
	return status
}
