package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// bootstrapOf is what the lot's worktree of rp gets: the lot's own
// Bootstrap for its own repository, the repository's for a neighbour.
func (lr *lotRun) bootstrapOf(rp *spec.Repo) spec.Bootstrap {
	if rp == lr.n.lot.Repo {
		return lr.n.lot.Bootstrap
	}
	return rp.Bootstrap
}

// setUp sets up the lot's worktrees before its first step (README
// "Worktrees and branches"): in each worktree of made (those this run
// made), or in all when the state records no setup ended ok, the
// submodules and the copy files, then the repository's setup command, the
// lot's own worktree first. The command runs as a command lot's step does
// (sh -c in the worktree, the lot's environment and guards, its own
// process group, the guards' checks before and after it, a change found
// there an incident that stops the wave, output to
// .cadence/<wave>/<lot>/setup[-<repo>].log), under
// the lot's timeout; it must leave HEAD where it found it. It is recorded
// in the lot's Setup, not as a step. ended says the lot ended here (status
// st): handed back with the cause when a setup failed, interrupted when
// cadence stopped it. Only a failure to record state is an error.
func (lr *lotRun) setUp(ctx context.Context, made map[*spec.Repo]bool) (st state.LotStatus, ended bool, err error) {
	var done bool
	lr.r.o.Store.View(func(s *state.State) {
		if l := s.Lots[lr.id]; l != nil && l.Setup != nil {
			done = l.Setup.Status == state.StepOK
		}
	})
	var todo []*spec.Repo
	for _, rp := range lr.n.lot.Repos() {
		b := lr.bootstrapOf(rp)
		if (made[rp] || !done) && (hasSubmodules(b, lr.dirs[rp]) || len(b.Copy) > 0 || b.Setup != "") {
			todo = append(todo, rp)
		}
	}
	if len(todo) == 0 {
		return "", false, nil
	}
	if err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		l.Setup = &state.Setup{Status: state.StepRunning, Started: lr.r.now().UTC()}
	}); err != nil {
		return "", false, err
	}
	var logs []string
	status, cause := state.StepOK, ""
	for _, rp := range todo {
		var log string
		status, cause, log = lr.setUpOne(ctx, rp)
		if log != "" {
			logs = append(logs, log)
		}
		if status != state.StepOK {
			break
		}
	}
	if err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		t := lr.r.now().UTC()
		l.Setup.Status, l.Setup.Cause, l.Setup.Ended, l.Setup.Logs = status, cause, &t, logs
	}); err != nil {
		return "", false, err
	}
	switch {
	case status == state.StepOK:
		return "", false, nil
	case status == state.StepInterrupted:
		st, err := lr.interrupted(cause)
		return st, true, err
	}
	st, err = lr.end(ctx, state.LotHandedBack, cause)
	return st, true, err
}

// setUpOne sets up the lot's worktree of rp: submodules and copies, then
// the setup command. It returns how it ended, the cause when not ok, and
// the command's log file ("" when it wrote nothing).
func (lr *lotRun) setUpOne(ctx context.Context, rp *spec.Repo) (state.StepStatus, string, string) {
	dir, b := lr.dirs[rp], lr.bootstrapOf(rp)
	what := "the setup of repo " + rp.Name + "'s worktree"
	if err := lr.r.o.Git.SetUpWorktree(ctx, rp, dir, b); err != nil {
		if ctx.Err() != nil || machineError(err) {
			return state.StepInterrupted, fmt.Sprintf("%s: %v", what, err), ""
		}
		return state.StepFailed, fmt.Sprintf("%s: %v", what, err), ""
	}
	if b.Setup == "" {
		return state.StepOK, "", ""
	}
	label := ""
	if rp != lr.n.lot.Repo {
		label = rp.Name
	}
	name := "setup.log"
	if label != "" {
		name = "setup-" + label + ".log"
	}
	path := filepath.Join(lr.r.o.Layout.LotDir(lr.id), name)
	sctx, stopSetup := context.WithCancel(ctx)
	defer stopSetup()
	f := newStepLog(lr, path, func(error) { stopSetup() })
	tail := f.tail
	defer f.Close()
	if t := lr.n.lot.Timeout; t > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(sctx, t)
		defer cancel()
	}
	head, _ := lr.r.o.Git.Head(ctx, dir)
	// The setup is watched as a command step is: refs, worktree HEADs and
	// config before and after it, the remotes with the shell steps'.
	watch := lr.watchStep(ctx, state.StepRun)
	if watch != nil {
		watch.kind = "setup"
	}
	lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "setup of repo " + rp.Name + "'s worktree: " + firstLine(lr.n.lot.Sensitive.Show("setup", b.Setup))})
	res, rerr := proc.Run(sctx, proc.Cmd{
		Path: "/bin/sh", Args: []string{"-c", b.Setup}, Dir: dir,
		Env:    append(append(append([]string{}, lr.r.o.Env...), lr.r.stepEnv(lr.id)...), lr.childEnv(label)...),
		Marks:  lr.r.stepMarks(lr.id),
		Limits: stepLimits(lr.n.lot.Limits),
		Stdout: f, Stderr: f,
	})
	switch {
	case rerr == nil && res.Stopped && ctx.Err() == nil:
		noteInLog(f, timeoutCause("the setup command", lr.n.lot.Timeout))
	case res.LimitHit != "":
		noteInLog(f, limitCause("the setup command", lr.n.lot.Limits, res.LimitHit))
	}
	werr := f.Close()
	logged := ""
	if _, err := os.Stat(path); err == nil {
		logged = path
	}
	if werr != nil {
		// The log could not be written: the machine's error, which stops
		// the wave (machinestop.go); the setup's tree is ended already.
		cause := fmt.Sprintf("%s: %s", what, writeFailure(werr, path))
		lr.r.machineStop(cause)
		return state.StepInterrupted, cause, logged
	}
	if cause := lr.checkRefs(ctx, watch); cause != "" {
		return state.StepFailed, cause, logged
	}
	last := strings.TrimRight(tail.String(), "\n")
	if last != "" {
		last = "; last output:\n" + last
	}
	switch {
	case rerr != nil:
		return state.StepInterrupted, fmt.Sprintf("%s: the setup command could not be run: %v", what, rerr), logged
	case res.Stopped && ctx.Err() != nil:
		return state.StepInterrupted, what + ": stopped by cadence", logged
	case res.Stopped:
		return state.StepTimedOut, fmt.Sprintf("%s: %s%s%s", what, timeoutCause("the setup command", lr.n.lot.Timeout), cutSuffix(f.Cut(), lr.n.lot.LogLimit), last), logged
	case res.LimitHit != "":
		return state.StepFailed, fmt.Sprintf("%s: %s%s%s", what, limitCause("the setup command", lr.n.lot.Limits, res.LimitHit), cutSuffix(f.Cut(), lr.n.lot.LogLimit), last), logged
	case res.ExitCode != 0 || res.Signal != 0:
		how := fmt.Sprintf("exit %d", res.ExitCode)
		if res.Signal != 0 {
			how = "killed by signal " + res.Signal.String()
		}
		return state.StepFailed, fmt.Sprintf("%s: the setup command failed (%s)%s%s", what, how, cutSuffix(f.Cut(), lr.n.lot.LogLimit), last), logged
	}
	if now, _ := lr.r.o.Git.Head(ctx, dir); now != head {
		return state.StepFailed, fmt.Sprintf("%s: the setup command moved HEAD from %s to %s; a setup must leave the branch as it found it", what, short(head), shortOr(now, "nothing")), logged
	}
	if dirty, err := lr.r.o.Git.Dirty(ctx, dir); err == nil && len(dirty) > 0 {
		return state.StepFailed, fmt.Sprintf("%s: the setup command left files git does not ignore (%s): they would be the lot's uncommitted change; make the setup write only ignored files", what, strings.Join(firstN(dirty, 5), ", ")), logged
	}
	return state.StepOK, "", logged
}

// hasSubmodules says whether the worktree at dir gets submodules under b:
// submodules not off, and a .gitmodules there.
func hasSubmodules(b spec.Bootstrap, dir string) bool {
	if b.Submodules == spec.SubmodulesOff {
		return false
	}
	_, err := os.Lstat(filepath.Join(dir, ".gitmodules"))
	return err == nil
}

// firstN is xs cut to n items, with "… and k more" for the rest.
func firstN(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(xs[:n:n], fmt.Sprintf("… and %d more", len(xs)-n))
}

// firstLine is s up to its first newline, with "…" when more follows.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
