package step

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/cadence-run/cadence/executor/step/guard"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// runCommand runs a command step (run, test) in req.Dir, its output to
// the step's log (req.Log, bounded by req.LogLimit), inside the guard. A
// test gate is run on the commit checked out when it starts: that is the
// commit it passes (Result.HeadAfter), and one that moves HEAD (a gate
// that commits, or checks out another commit) is failed: what it tested
// is not what the branch now holds; the branch is put back there.
func (l *Local) runCommand(ctx context.Context, req Request, lot guard.Lot, events Events) Result {
	kind := req.Kind
	if cause := begin(events, kind); cause != "" {
		return Result{Status: state.StepInterrupted, Cause: cause, Unstarted: true}
	}
	// The log file (and the lot's log folder) is made when the command
	// first writes: a silent command costs no file, which on a busy disk
	// is most of what a small command lot costs. A write that fails ends
	// the step at once.
	sctx, stopStep := context.WithCancel(ctx)
	defer stopStep()
	f := newStepLog(req.Log, req.LogLimit, func(error) { stopStep() })
	defer f.Close()
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(sctx, req.Timeout)
		defer cancel()
	}
	// A step in a worktree starts at a commit: a test gate's is the one it
	// tests, a run step's is where its commits are counted from.
	var tested string
	if len(lot.Repos) > 0 {
		tested, _ = l.git.Head(ctx, req.Dir)
	}
	cmd, boxed, berr := l.shellCmd(ctx, req, req.Dir, l.stepEnv(req))
	if berr != nil {
		return Result{Status: state.StepInterrupted, Cause: fmt.Sprintf("%s step: its sandbox: %v", kind, berr), Unstarted: true, HeadBefore: tested}
	}
	// The lead's checkouts are compared around a command that ran outside
	// the sandbox only: in it, they are read-only.
	watch := l.before(ctx, lot, guard.Options{Kind: string(kind), Shell: true, Checkout: !boxed}, events)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Started = func(pid int) { send(events, Event{Kind: EventStarted, PID: pid}) }
	pres, rerr := runShell(sctx, cmd, boxed, f, func() (proc.Cmd, error) {
		c, _, err := l.shellCmd(ctx, req, req.Dir, l.stepEnv(req))
		return c, err
	})
	// The step's own last lines, for the lot's outcome: cadence's note
	// below goes to the log only.
	stepOut := f.tail.String()
	// The log's last line says why cadence ended the step, if it did.
	switch {
	case rerr == nil && pres.Stopped && ctx.Err() == nil:
		noteInLog(f, timeoutCause(string(kind)+" step", req.Timeout))
	case pres.LimitHit != "":
		noteInLog(f, limitCause(string(kind)+" step", req.Limits, pres.LimitHit))
	}
	werr := f.Close()
	res := Result{HeadBefore: tested, OutputCut: f.Cut(), LimitHit: string(pres.LimitHit)}
	if werr != nil {
		// The log could not be written: the machine's error, which stops
		// the wave; the step's tree is ended already (stopStep). The
		// guard still checks what the step did.
		incident := guarded(&res, req.ID, watch.After(ctx), events)
		res.Status, res.Cause, res.WriteFailed = state.StepInterrupted, fmt.Sprintf("%s step: %s", kind, WriteFailure(werr, f.path)), true
		res.Cause = joinCause(res.Cause, incident)
		return res
	}
	// A cut output is said in the step's cause and recorded (OutputCut).
	cut := cutNote(f.Cut(), req.LogLimit)
	if out := f.tail.String(); out != "" && !(pres.Stopped && ctx.Err() != nil) {
		send(events, Event{Kind: EventOutput, Text: out})
	}
	if incident := guarded(&res, req.ID, watch.After(ctx), events); incident != "" {
		res.Status, res.Cause = state.StepFailed, incident
		return res
	}
	switch {
	case rerr != nil && tooLong(rerr):
		// The command itself cannot be run (plan warns of it): the lot's
		// error, which no replay mends.
		res.Status, res.Cause = state.StepFailed, fmt.Sprintf("%s step: the command is %d bytes, more than one argument of sh -c may be (%d): put it in a script file and run that", kind, len(req.Command), spec.MaxArgBytes-1)
		return res
	case rerr != nil:
		// The command could not be started or waited for: the machine's
		// error, never the lot's (an interrupt, docs/running.md).
		res.Status, res.Cause, res.Unstarted = state.StepInterrupted, fmt.Sprintf("%s step: %v", kind, rerr), true
		if _, err := os.Stat(req.Dir); errors.Is(err, fs.ErrNotExist) {
			res.Cause = fmt.Sprintf("%s step: its folder %s is gone (the next apply makes the worktree again from the lot's branch)", kind, req.Dir)
		}
		return res
	case pres.Stopped && ctx.Err() != nil:
		res.Status, res.Cause = state.StepInterrupted, joinCause("stopped by cadence", cut)
		return res
	case pres.Stopped:
		res.Status, res.Cause, res.Output = state.StepTimedOut, joinCause(timeoutCause(string(kind)+" step", req.Timeout), cut), stepOut
		return res
	case pres.LimitHit != "":
		res.Status, res.Cause, res.Output = state.StepFailed, joinCause(limitCause(string(kind)+" step", req.Limits, pres.LimitHit), cut), stepOut
		return res
	case pres.ExitCode != 0 || pres.Signal != 0:
		how := fmt.Sprintf("exit %d", pres.ExitCode)
		if pres.Signal != 0 {
			how = "killed by signal " + pres.Signal.String()
		}
		res.Status, res.Cause, res.Output = state.StepFailed, joinCause(how, cut), stepOut
		return res
	}
	if kind == state.StepTest {
		if head, _ := l.git.Head(ctx, req.Dir); head != tested {
			cause := fmt.Sprintf("the test gate moved HEAD from %s to %s (it committed, reset or checked out): a test gate must leave the branch as it found it", short(tested), shortOr(head, "nothing"))
			cause += l.putBackAfterGate(ctx, req, &res, tested)
			res.Status, res.Cause = state.StepFailed, joinCause(cause, cut)
			return res
		}
	}
	res.Status, res.Cause, res.HeadAfter = state.StepOK, cut, tested
	if kind == state.StepRun && tested != "" {
		res.HeadAfter, _ = l.git.Head(ctx, req.Dir)
		if res.HeadAfter != tested && res.HeadAfter != "" {
			res.Commits, _ = l.git.Commits(ctx, req.Dir, tested, res.HeadAfter)
		}
	}
	return res
}

// putBackAfterGate puts the lot's branch in the worktree the test gate
// ran in back at tested, where the gate found it before moving HEAD,
// keeping what the gate left (commits, changes) under the lot's next
// backup ref (Git.ResetForReplay, recorded in res.Backups), so that a
// gate that reset the branch loses none of the lot's commits. It says
// what it did, for the step's cause.
func (l *Local) putBackAfterGate(ctx context.Context, req Request, res *Result, tested string) string {
	rp, _, err := l.repoOf(req.Lot, req.Repo)
	if err != nil || tested == "" {
		return ""
	}
	done := l.guard.Moving(req.ID) // cadence moves the branch itself
	ref, err := l.git.ResetForReplay(context.WithoutCancel(ctx), rp, req.Dir, req.Wave, req.ID, tested)
	done()
	msg := "; the branch is put back at " + short(tested)
	if ref != "" {
		msg += ", what the gate left kept under " + ref
		res.Backups = append(res.Backups, ref)
	}
	if err != nil {
		return "; the branch could not be put back at " + short(tested) + ": " + err.Error()
	}
	return msg
}

// tooLong says the kernel refused a command for its length (E2BIG:
// "argument list too long", Linux's 128 KiB per argument).
func tooLong(err error) bool {
	return errors.Is(err, syscall.E2BIG) || strings.Contains(err.Error(), "argument list too long")
}
