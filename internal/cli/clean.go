package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/flock"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

func runClean(e *env, args []string) ExitCode {
	fs := newFlags(e, "clean", "[FILE]", "Remove what a finished or abandoned wave left in its repositories: lot worktrees (found\nfrom the state; of one whose folder was deleted, git's record), lot branches, a leftover\npush guard, and the step cgroups killed supervisors left. Never a worktree with uncommitted changes, nor\na branch (or its worktree) holding commits that are not in the base, nor a branch checked\nout in a worktree that stays, nor the worktrees and branch of a lot a plain apply resumes\n(queued, interrupted, suspended, waiting for an answer), nor a backup ref\n(refs/cadence/backup/…, the commits of an earlier attempt: listed, never removed). Shows\nwhat it would do unless -dry-run=false.")
	dry := fs.Bool("dry-run", true, "only show what would be removed")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	file, ok := oneFile(e, "clean", pos)
	if !ok {
		return ExitUsage
	}
	w, diags := e.loadWave(file, spec.Options{})
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
	st, _, err := state.Read(lay.StateFile())
	if err != nil && !errors.Is(err, state.ErrNotExist) {
		fmt.Fprintf(e.stderr, "cadence clean: %v\n", err)
		return ExitError
	}
	known := waveWorktrees(lay.WithWorktrees(w.cfg.Wave.Worktrees), st, w.cfg.Repos)
	// The wave's lot branches are where its state records them; a wave
	// that recorded none (or has no state) has the plain namespace.
	branches := planner.RecordedNamespace(st)
	if branches == "" {
		branches = planner.Namespace(w.cfg.Wave.Name)
	}
	g := gitint.NewRepos(os.Environ())
	status := ExitOK
	out := cleanOutput{FormatVersion: outputFormatVersion, Wave: w.cfg.Wave.Name, DryRun: *dry, Items: []cleanItem{}}
	// say prints one item as text (-json prints them all at the end).
	say := func(it cleanItem, line string) {
		out.Items = append(out.Items, it)
		if !fs.json {
			fmt.Fprintln(e.stdout, line)
		}
	}
	// What agent sessions killed with their cadence left (the sandbox's
	// empty placeholders, an empty config.lock that fails git config) goes
	// first: it would keep a worktree as "uncommitted changes", and the
	// guard in place.
	for _, it := range tidyKilled(e.agents(), lay.WithWorktrees(w.cfg.Wave.Worktrees), w.cfg.Repos, *dry) {
		if *dry {
			say(it, fmt.Sprintf("remove  %s %s %s", it.Repo, it.Kind, it.Path))
		} else {
			say(it, fmt.Sprintf("removed %s %s %s", it.Repo, it.Kind, it.Path))
		}
	}
	for _, it := range tidyCgroups(st, *dry) {
		if *dry {
			say(it, fmt.Sprintf("remove  %s %s", it.Kind, it.Path))
		} else {
			say(it, fmt.Sprintf("removed %s %s", it.Kind, it.Path))
		}
	}
	for _, repo := range w.cfg.Repos {
		if f, err := g.Inspect(ctx, repo.Path, repo.Base); err != nil || !f.IsGit {
			continue
		}
		g.Prune(ctx, repo.Path)
		lefts, err := g.Leftovers(ctx, repo, w.cfg.Wave.Name, branches, known)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence clean: repo %s: %v\n", repo.Name, err)
			status = ExitError
			continue
		}
		keepUnowned(lefts, lotBranches(st, branches))
		keepResumable(lefts, st, branches, w.cfg.Repos)
		// Worktrees before branches: a checked-out branch cannot go.
		for _, kind := range []string{"worktree", "guard", "hook", "branch", "backup"} {
			for _, lo := range lefts {
				if lo.Kind != kind {
					continue
				}
				it := cleanItem{Repo: repo.Name, Kind: lo.Kind, Path: lo.Path, Gone: lo.Gone}
				switch {
				case lo.Keep != "":
					it.Action, it.Reason = cleanKeep, lo.Keep
					say(it, fmt.Sprintf("keep    %s %s %s: %s", repo.Name, lo.Kind, lo.Path, lo.Keep))
				case *dry:
					it.Action = cleanRemove
					say(it, fmt.Sprintf("remove  %s %s %s%s", repo.Name, lo.Kind, lo.Path, goneNote(lo, "git still lists it; clean unlocks and prunes that record")))
				default:
					if err := g.RemoveLeftover(ctx, repo, lo); err != nil {
						it.Action, it.Reason = cleanKeep, err.Error()
						say(it, fmt.Sprintf("keep    %s %s %s: %v", repo.Name, lo.Kind, lo.Path, err))
						status = ExitError
						continue
					}
					it.Action = cleanRemoved
					say(it, fmt.Sprintf("removed %s %s %s%s", repo.Name, lo.Kind, lo.Path, goneNote(lo, "git's record of it unlocked and pruned")))
				}
			}
		}
	}
	switch {
	case fs.json:
		if err := writeJSON(e.stdout, out); err != nil {
			fmt.Fprintf(e.stderr, "cadence clean: %v\n", err)
			return ExitError
		}
	case len(out.Items) == 0:
		fmt.Fprintf(e.stdout, "Nothing to clean for wave %q.\n", w.cfg.Wave.Name)
	case *dry:
		fmt.Fprintln(e.stdout, "\nDry run: nothing was removed. cadence clean -dry-run=false "+file+" removes what is marked remove.")
	}
	return status
}

// cleanOutput is cadence clean -json: what clean found in the wave's
// repositories and what it did with each.
type cleanOutput struct {
	FormatVersion int    `json:"format_version"`
	Wave          string `json:"wave"`
	// DryRun is -dry-run: nothing was removed.
	DryRun bool        `json:"dry_run"`
	Items  []cleanItem `json:"items"`
}

// clean's actions: kept (with a reason), would be removed (dry run), removed.
const (
	cleanKeep    = "keep"
	cleanRemove  = "remove"
	cleanRemoved = "removed"
)

// cleanItem is one leftover (gitint.Leftover) and what clean did with it.
type cleanItem struct {
	Repo string `json:"repo"`
	// Kind is "worktree", "guard", "hook", "branch", "backup",
	// "placeholder" (a file or empty folder a killed agent session left,
	// agent.Tidier) or "cgroup" (a step cgroup a killed supervisor left,
	// proc.TidyStepCgroups; Repo is "").
	Kind string `json:"kind"`
	// Path is the worktree folder, branch or ref name, or file.
	Path string `json:"path"`
	// Action is "keep", "remove" (a dry run) or "removed"; Reason says why
	// a leftover is kept ("" otherwise).
	Action string `json:"action"`
	Reason string `json:"reason"`
	// Gone says a worktree's folder is gone (git only keeps its record).
	Gone bool `json:"gone"`
}

// unownedReason is why clean keeps a branch under the wave's namespace
// that no lot of its state owns.
const unownedReason = "no lot of the wave's state owns it (not made by cadence for this wave)"

// lotBranches are the branches the lots of st own: each lot's recorded
// branch, and its branch in namespace ns (planner.LotBranch), in every
// repository. None when st is nil (no apply has run).
func lotBranches(st *state.State, ns string) map[string]bool {
	owned := map[string]bool{}
	if st == nil {
		return owned
	}
	for id, l := range st.Lots {
		owned[planner.LotBranch(ns, id)] = true
		if l != nil && l.Branch != "" {
			owned[l.Branch] = true
		}
	}
	return owned
}

// keepUnowned marks kept (unownedReason) every branch of lefts that owned
// does not hold and that is not kept already: clean removes only the
// branches of lots the state knows.
func keepUnowned(lefts []gitint.Leftover, owned map[string]bool) {
	for i, lo := range lefts {
		if lo.Kind == "branch" && lo.Keep == "" && !owned[lo.Path] {
			lefts[i].Keep = unownedReason
		}
	}
}

// goneNote is what clean adds to the line of a worktree whose folder is
// gone: what happens to git's record (what), and that the branch stays.
func goneNote(lo gitint.Leftover, what string) string {
	if !lo.Gone {
		return ""
	}
	return ": its folder is gone; " + what + " (its branch stays)"
}

// waveWorktrees says which worktree folders are the wave's (for
// gitint.Leftovers): those its state st records (a lot's own worktree, and
// its neighbour worktrees beside it, layout.AlsoWorktree), and those where
// lay puts the wave's worktrees (lay.HoldsWorktree: the current scheme and
// the old .cadence/worktrees/<wave>). A wave with no state yet (st nil) has
// only the latter.
func waveWorktrees(lay layout.Wave, st *state.State, repos []*spec.Repo) func(string) bool {
	recorded := map[string]bool{}
	add := func(p string) {
		recorded[filepath.Clean(p)] = true
		if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			recorded[filepath.Join(r, filepath.Base(p))] = true
		}
	}
	if st != nil {
		for _, l := range st.Lots {
			if l.Worktree == "" {
				continue
			}
			add(l.Worktree)
			for _, r := range repos {
				add(layout.AlsoWorktree(l.Worktree, r.Name))
			}
		}
	}
	return func(p string) bool { return recorded[filepath.Clean(p)] || lay.HoldsWorktree(p) }
}

// tidyCgroups removes (unless dry) the step cgroups that supervisors
// killed with SIGKILL left on this machine (proc.TidyStepCgroups): the
// empty ones, and those whose processes all carry the wave's mark (its
// state's lineage; st may be nil), after ending them. Those holding
// another's processes are not the wave's: left alone, unlisted.
func tidyCgroups(st *state.State, dry bool) []cleanItem {
	var marks []string
	if st != nil && st.Lineage != "" {
		marks = []string{agent.WaveMark + "=" + st.Lineage}
	}
	removed, _ := proc.TidyStepCgroups(marks, dry)
	action := cleanRemoved
	if dry {
		action = cleanRemove
	}
	var items []cleanItem
	for _, d := range removed {
		items = append(items, cleanItem{Kind: "cgroup", Path: d, Action: action})
	}
	return items
}
