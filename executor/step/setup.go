package step

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
)

// runSetup sets up the worktree req.Dir of the repository req.Repo names
// ("" the lot's own) (KindSetup): its submodules and copy files
// (Git.SetUpWorktree, req.Bootstrap), then the setup command, req.Command
// ("" none), watched as a command step is: refs, worktree HEADs and config before and after
// it, the remotes with the command steps'. A setup must leave the branch
// where it found it and write only files git ignores. The Result's cause
// names the setup; Logged says its log file (req.Log) was written.
func (l *Local) runSetup(ctx context.Context, req Request, lot guard.Lot, events Events) Result {
	rp, _, err := l.repoOf(req.Lot, req.Repo)
	if err != nil {
		return Result{Status: state.StepFailed, Cause: err.Error()}
	}
	dir := req.Dir
	what := "the setup of repo " + rp.Name + "'s worktree"
	if err := l.git.SetUpWorktree(ctx, rp, dir, req.Bootstrap); err != nil {
		st := state.StepFailed
		if ctx.Err() != nil || MachineError(err) {
			st = state.StepInterrupted
		}
		return Result{Status: st, Cause: fmt.Sprintf("%s: %v", what, err)}
	}
	if req.Command == "" {
		return Result{Status: state.StepOK}
	}
	sctx, stopSetup := context.WithCancel(ctx)
	defer stopSetup()
	f := newStepLog(req.Log, req.LogLimit, func(error) { stopSetup() })
	tail := f.tail
	defer f.Close()
	if t := req.Timeout; t > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(sctx, t)
		defer cancel()
	}
	if cause := begin(events, req.Kind); cause != "" {
		return Result{Status: state.StepInterrupted, Cause: cause, Unstarted: true}
	}
	head, _ := l.git.Head(ctx, dir)
	cmd, boxed, berr := l.shellCmd(ctx, req, dir, l.stepEnv(req))
	if berr != nil {
		return Result{Status: state.StepInterrupted, Cause: fmt.Sprintf("%s: its sandbox: %v", what, berr), Unstarted: true}
	}
	watch := l.before(ctx, lot, guard.Options{Kind: "setup", Shell: true, Checkout: !boxed}, events)
	cmd.Stdout, cmd.Stderr = f, f
	pres, rerr := runShell(sctx, cmd, boxed, f, func() (proc.Cmd, error) {
		c, _, err := l.shellCmd(ctx, req, dir, l.stepEnv(req))
		return c, err
	})
	switch {
	case rerr == nil && pres.Stopped && ctx.Err() == nil:
		noteInLog(f, timeoutCause("the setup command", req.Timeout))
	case pres.LimitHit != "":
		noteInLog(f, limitCause("the setup command", req.Limits, pres.LimitHit))
	}
	werr := f.Close()
	var res Result
	if _, err := os.Stat(req.Log); err == nil {
		res.Logged = true
	}
	res.OutputCut, res.LimitHit = f.Cut(), string(pres.LimitHit)
	incident := guarded(&res, req.ID, watch.After(ctx), events)
	if werr != nil {
		// The log could not be written: the machine's error, which stops
		// the wave; the setup's tree is ended already.
		res.Status, res.Cause, res.WriteFailed = state.StepInterrupted, fmt.Sprintf("%s: %s", what, WriteFailure(werr, req.Log)), true
		return res
	}
	if incident != "" {
		res.Status, res.Cause = state.StepFailed, incident
		return res
	}
	last := strings.TrimRight(tail.String(), "\n")
	if last != "" {
		last = "; last output:\n" + last
	}
	res.Status = state.StepFailed
	switch {
	case rerr != nil:
		res.Status, res.Cause = state.StepInterrupted, fmt.Sprintf("%s: the setup command could not be run: %v", what, rerr)
	case pres.Stopped && ctx.Err() != nil:
		res.Status, res.Cause = state.StepInterrupted, what+": stopped by cadence"
	case pres.Stopped:
		res.Status, res.Cause = state.StepTimedOut, fmt.Sprintf("%s: %s%s%s", what, timeoutCause("the setup command", req.Timeout), cutSuffix(f.Cut(), req.LogLimit), last)
	case pres.LimitHit != "":
		res.Cause = fmt.Sprintf("%s: %s%s%s", what, limitCause("the setup command", req.Limits, pres.LimitHit), cutSuffix(f.Cut(), req.LogLimit), last)
	case pres.ExitCode != 0 || pres.Signal != 0:
		how := fmt.Sprintf("exit %d", pres.ExitCode)
		if pres.Signal != 0 {
			how = "killed by signal " + pres.Signal.String()
		}
		res.Cause = fmt.Sprintf("%s: the setup command failed (%s)%s%s", what, how, cutSuffix(f.Cut(), req.LogLimit), last)
	default:
		if now, _ := l.git.Head(ctx, dir); now != head {
			res.Cause = fmt.Sprintf("%s: the setup command moved HEAD from %s to %s; a setup must leave the branch as it found it", what, short(head), shortOr(now, "nothing"))
		} else if dirty, err := l.git.Dirty(ctx, dir); err == nil && len(dirty) > 0 {
			res.Cause = fmt.Sprintf("%s: the setup command left files git does not ignore (%s): they would be the lot's uncommitted change; make the setup write only ignored files", what, strings.Join(firstN(dirty, 5), ", "))
		} else {
			res.Status = state.StepOK
		}
	}
	return res
}

// firstN returns at most n of xs, with "… and K more" for the rest.
func firstN(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(xs[:n:n], fmt.Sprintf("… and %d more", len(xs)-n))
}
