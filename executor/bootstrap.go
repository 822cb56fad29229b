package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadence-run/cadence/executor/step"
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

// setUp sets up the lot's worktrees before its first step
// (docs/integration.md, Branches): in each worktree of made (those this run
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

// setUpOne sets up the lot's worktree of rp through the step runner
// (step.KindSetup): submodules and copies, then the setup command. It returns how it ended, the cause when not ok, and
// the command's log file ("" when it wrote nothing).
func (lr *lotRun) setUpOne(ctx context.Context, rp *spec.Repo) (state.StepStatus, string, string) {
	dir, b := lr.dirs[rp], lr.bootstrapOf(rp)
	what := "the setup of repo " + rp.Name + "'s worktree"
	label := ""
	if rp != lr.n.lot.Repo {
		label = rp.Name
	}
	name := "setup.log"
	if label != "" {
		name = "setup-" + label + ".log"
	}
	req := lr.request(step.KindSetup, 0)
	req.Dir, req.Repo, req.Command, req.Bootstrap, req.Timeout, req.Env = dir, label, b.Setup, b, lr.n.lot.Timeout, lr.childEnv(label)
	req.Log = filepath.Join(lr.r.o.Layout.LotDir(lr.id), name)
	if b.Setup != "" {
		lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Message: "setup of repo " + rp.Name + "'s worktree: " + firstLine(lr.n.lot.Sensitive.Show("setup", b.Setup))})
	}
	res, _, err := lr.runStep(ctx, req, func() (int, error) { return -1, nil })
	if err != nil {
		return state.StepFailed, fmt.Sprintf("%s: %v", what, err), ""
	}
	logged := ""
	if res.Logged {
		logged = req.Log
	}
	return res.Status, res.Cause, logged
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

// firstLine is s up to its first newline, with "…" when more follows.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
