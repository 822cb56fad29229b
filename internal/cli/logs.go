package cli

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

func runLogs(e *env, args []string) ExitCode {
	fs := newFlags(e, "logs", "[FILE] LOT", "Show a lot's steps from the state file, and the logs and reports of its steps\n(.cadence/<wave>/<lot>/; an earlier run's, set aside by -replace, in replaced-<k>/), and the\nbackup refs that keep the commits of its earlier attempts.\n-step N shows one step's files whole. FILE defaults to wave.hcl; a first argument that ends in\n.hcl or .hcl.json, or is an existing file, is the wave file.")
	step := fs.Int("step", -1, "show the files of step N whole")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	file, rest := waveFileFirst(pos)
	if len(rest) != 1 {
		fmt.Fprintln(e.stderr, "cadence logs: usage: cadence logs [FILE] LOT [-step N] (FILE: wave.hcl when not given)")
		return ExitUsage
	}
	id := rest[0]
	lay := e.layoutOf(file, "")
	if err := noWaveFile("logs", file, lay.StateFile()); err != nil {
		fmt.Fprintf(e.stderr, "cadence logs: %v\n", err)
		return ExitError
	}
	st, _, err := state.Read(lay.StateFile())
	if errors.Is(err, state.ErrNotExist) {
		fmt.Fprintf(e.stderr, "cadence logs: %s %v: %s\n", file, errNoState, lay.StateFile())
		return ExitError
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence logs: %v\n", err)
		return ExitError
	}
	l := st.Lots[id]
	if l == nil {
		fmt.Fprintf(e.stderr, "cadence logs: the state of wave %q has no lot %q\n", st.Wave, id)
		return ExitError
	}
	lay = lay.Named(st.Wave)
	dir := lay.LotDir(id)
	if *step >= 0 {
		matches, _ := filepath.Glob(lay.StepGlob(id, *step))
		if len(matches) == 0 {
			fmt.Fprintf(e.stderr, "cadence logs: no files for step %d in %s\n", *step, dir)
			return ExitError
		}
		if fs.json {
			return stepJSON(e, st.Wave, id, *step, matches)
		}
		for _, m := range matches {
			b, _ := os.ReadFile(m)
			fmt.Fprintf(e.stdout, "==> %s <==\n%s\n", m, strings.TrimRight(string(b), "\n"))
		}
		return ExitOK
	}
	if fs.json {
		return logsJSON(e, lay, st, id)
	}
	fmt.Fprintf(e.stdout, "Lot %s: %s", id, l.Status)
	if l.Cause != "" {
		fmt.Fprintf(e.stdout, " (%s)", firstLine(l.Cause))
	}
	fmt.Fprintln(e.stdout)
	if st.Incident != "" {
		fmt.Fprintf(e.stdout, "INCIDENT in the last apply: %s\n", visibleControls(st.Incident, true))
	}
	if st.Stopped != "" && l.Status != state.LotDone {
		fmt.Fprintf(e.stdout, "The last apply stopped: %s\n", visibleControls(st.Stopped, true))
	}
	if l.Branch != "" {
		fmt.Fprintf(e.stdout, "Branch %s from %.12s", l.Branch, l.BaseSHA)
		if l.IntegratedSHA != "" {
			fmt.Fprintf(e.stdout, ", integrated at %.12s", l.IntegratedSHA)
		}
		fmt.Fprintln(e.stdout)
	}
	lotWorktrees(e, l)
	if in := l.Integrating; in != nil {
		fmt.Fprintln(e.stdout, "Integration in progress (cadence stopped between two repositories; the next apply completes it):")
		for _, m := range in.Repos {
			fmt.Fprintf(e.stdout, "     repo %s: %s from %.12s to %.12s\n", m.Repo, m.Base, m.Old, m.New)
		}
	}
	for i, s := range l.Steps {
		dur := ""
		if s.Ended != nil {
			dur = spec.FormatDuration(s.Ended.Sub(s.Started))
		}
		fmt.Fprintf(e.stdout, "%d  %s %s", i, s.Started.Local().Format(time.DateTime), s.Kind)
		if s.Pass > 0 {
			fmt.Fprintf(e.stdout, " (pass %d)", s.Pass)
		}
		if s.Model != "" {
			fmt.Fprintf(e.stdout, " [%s]", s.Model)
		}
		if s.Repo != "" {
			fmt.Fprintf(e.stdout, " in repo %s", s.Repo)
		}
		fmt.Fprintf(e.stdout, "  %s  %s", s.Status, dur)
		if n := s.Usage.Counted(); n > 0 {
			fmt.Fprintf(e.stdout, "  %s tokens", spec.Tokens(n))
		}
		if s.Cause != "" {
			fmt.Fprintf(e.stdout, "  %s", firstLine(s.Cause))
		}
		fmt.Fprintln(e.stdout)
		for _, c := range s.Commits {
			fmt.Fprintf(e.stdout, "     %s\n", c)
		}
		for _, repo := range slices.Sorted(maps.Keys(s.AlsoCommits)) {
			for _, c := range s.AlsoCommits[repo] {
				fmt.Fprintf(e.stdout, "     %s: %s\n", repo, c)
			}
		}
		files, _ := filepath.Glob(lay.StepGlob(id, i))
		for _, f := range files {
			fmt.Fprintf(e.stdout, "     %s\n", f)
		}
		// A UX review's evidence (docs/ux.md): its screenshots, or why
		// it has none.
		if s.NotVerified != "" {
			fmt.Fprintf(e.stdout, "     UX not verified: %s\n", firstLine(s.NotVerified))
		}
		for _, p := range s.Screenshots {
			fmt.Fprintf(e.stdout, "     screenshot %s\n", p)
		}
	}
	for _, w := range l.Warnings {
		fmt.Fprintf(e.stdout, "warning: %s\n", w)
	}
	if len(l.Backups) > 0 {
		fmt.Fprintln(e.stdout, "Commits of earlier attempts (a replayed command, -replace), kept by cadence:")
		for _, ref := range l.Backups {
			fmt.Fprintf(e.stdout, "     %s  (git log %s)\n", ref, ref)
		}
	}
	if earlier, _ := filepath.Glob(lay.ReplacedGlob(id)); len(earlier) > 0 {
		fmt.Fprintln(e.stdout, "Files of earlier runs (before -replace):")
		for _, d := range earlier {
			fmt.Fprintf(e.stdout, "     %s\n", d)
		}
	}
	return ExitOK
}

// madeCommits says whether a step of the lot recorded a commit, in its own
// repository or a neighbour: only then has its branch something to keep
// (cadence clean removes a lot branch with nothing on it).
func madeCommits(l *state.Lot) bool {
	for _, s := range l.Steps {
		if len(s.Commits) > 0 || len(s.AlsoCommits) > 0 {
			return true
		}
	}
	return false
}

// lotWorktrees prints the lot's worktrees whole (the path to cd into; under
// the cadence home it is long): its own, the one the state records, and
// its neighbour worktrees beside it (layout.AlsoWorktree) that are there.
// A recorded worktree that is not there is named with where the lot's
// work is, unless the lot is done (integration removes it) or never got
// its branch.
func lotWorktrees(e *env, l *state.Lot) {
	if l.Worktree == "" {
		return
	}
	if _, err := os.Stat(l.Worktree); err == nil {
		fmt.Fprintf(e.stdout, "Worktree %s\n", l.Worktree)
	} else if l.Status != state.LotDone && l.Branch != "" {
		if madeCommits(l) {
			fmt.Fprintf(e.stdout, "Worktree %s (its folder is gone; branch %s keeps the lot's commits)\n", l.Worktree, l.Branch)
		} else {
			fmt.Fprintf(e.stdout, "Worktree %s (its folder is gone; the lot recorded no commit)\n", l.Worktree)
		}
	}
	also, _ := filepath.Glob(layout.AlsoWorktree(l.Worktree, "*"))
	for _, a := range also {
		fmt.Fprintf(e.stdout, "Worktree %s\n", a)
	}
}
