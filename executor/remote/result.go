package remote

import (
	"context"
	"fmt"
	"strings"

	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
)

// uncitedPrefix starts the warning of a commit whose message does not
// cite the lot id (the local runner's words, executor/step/session.go).
const uncitedPrefix = "commit does not cite the lot id: "

// fromWorker is the part of a worker's step.Result the lead takes: what
// the worker saw of its own run (status, cause, output tail, usage and
// cost, never below zero, the adapter's API failure and reset time, the
// report, the denied calls and its warnings, a read-only step's changes,
// the output cut and the limit hit, whether it started). Every field
// that claims a fact of the lead's side is left out, for the lead to
// recompute (HeadBefore, HeadAfter, Commits, AlsoCommits and the uncited
// warnings: onBranch) or to set itself (Incident and Held: a refused
// bundle) or never: the worker's Incidents (a guard's finding on the
// worker's machine, not the lead's wave), Backups (refs of the worker's
// clone), WriteFailed (the worker's machine's error: the step stays
// interrupted, the lead's wave does not stop), ReportPath and Logged
// (files of the worker's).
func fromWorker(w step.Result) step.Result {
	out := step.Result{Status: w.Status, Cause: w.Cause, Output: w.Output, Usage: w.Usage, CostMicros: w.CostMicros,
		CostEstimated: w.CostEstimated, RawUsage: w.RawUsage, API: w.API, ResetAt: w.ResetAt, Report: w.Report,
		Changed: w.Changed, Denied: w.Denied, OutputCut: w.OutputCut, LimitHit: w.LimitHit, Unstarted: w.Unstarted}
	// the lead's budget adds what a worker reports: never less than nothing
	for _, n := range []*int64{&out.Usage.Input, &out.Usage.CacheWrite, &out.Usage.CacheRead, &out.Usage.Output, &out.CostMicros} {
		*n = max(*n, 0)
	}
	for _, warn := range w.Warnings {
		if !strings.HasPrefix(warn, uncitedPrefix) {
			out.Warnings = append(out.Warnings, warn)
		}
	}
	if w.WriteFailed && out.Status == state.StepOK {
		out.Status = state.StepInterrupted
	}
	return out
}

// onBranch sets out's HeadBefore, HeadAfter, Commits, AlsoCommits and
// uncited-commit warnings from the lot's worktrees on the lead, read with
// the lead's git (Options.Transport) after the result's bundles were
// accepted or refused: the commits from the head each repository was sent
// at (work.Repos[i].Head) to its worktree's HEAD, "sha subject", oldest
// first, as the local runner lists them. The step's own repository is the
// one it ran in (Work.DirRepo), else the lot's. A worktree that cannot be
// read interrupts the step.
func (r *Runner) onBranch(ctx context.Context, req step.Request, work Work, out *step.Result) {
	own := work.DirRepo
	if own == "" && len(work.Repos) > 0 {
		own = work.Repos[0].Name
	}
	git := r.o.Transport.Repos
	for i, wr := range work.Repos {
		if i >= len(req.Repos) {
			break
		}
		head, err := git.Head(ctx, req.Repos[i].Worktree)
		var commits []string
		if err == nil && head != wr.Head && !req.ReadOnly {
			commits, err = git.Commits(ctx, req.Repos[i].Worktree, wr.Head, head)
		}
		if err != nil {
			out.Status, out.Cause = state.StepInterrupted, joinCause(out.Cause, fmt.Sprintf("the lot's worktree of %s cannot be read after the worker's result: %v", wr.Name, err))
			return
		}
		if wr.Name == own {
			out.HeadBefore, out.HeadAfter, out.Commits = wr.Head, head, commits
			continue
		}
		if len(commits) > 0 {
			if out.AlsoCommits == nil {
				out.AlsoCommits = map[string][]string{}
			}
			out.AlsoCommits[wr.Name] = commits
		}
	}
	for _, c := range out.Commits {
		if !strings.Contains(c, req.ID) {
			out.Warnings = append(out.Warnings, uncitedPrefix+c)
		}
	}
	for _, wr := range work.Repos {
		for _, c := range out.AlsoCommits[wr.Name] {
			if !strings.Contains(c, req.ID) {
				out.Warnings = append(out.Warnings, uncitedPrefix+wr.Name+": "+c)
			}
		}
	}
}

// joinCause is cause, then more.
func joinCause(cause, more string) string {
	if cause == "" {
		return more
	}
	return cause + "; " + more
}

// onWorkerClone is the cause of a step whose guard found an incident on
// the worker: the worker's words (a ref put back, "kept under
// refs/cadence/rescue/…") are of its own clone of the lot's repositories,
// removed when the run ended, so the cause says where they happened; the
// lead's repositories were not touched (nothing but the lot's branch comes
// back, through the checked bundle).
func onWorkerClone(worker, cause string) string {
	return "on worker " + worker + ", in its own clone of the lot's repositories (nothing of this machine's moved; its rescue refs went with the clone): " + cause
}
