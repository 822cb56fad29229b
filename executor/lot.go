package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// lotRun is one lot's run: its node, folders and the step being recorded.
type lotRun struct {
	r      *runner
	n      *node
	id     string
	dir    string // where steps run: the worktree, or the wave's folder
	branch string
	logDir string
	// noChange says the command lot's run step ended ok without a commit
	// (noteNoChange): the lot ends done with the note NoChange.
	noChange bool
	// held, once set, is why the lot stops at its next step boundary,
	// interrupted (a change of the lead's checkout during its step:
	// checkoutguard.go).
	held string
	// dirs are the worktrees of the lot's repositories (own and also).
	dirs map[*spec.Repo]string
	// bases are the commits the lot's branches in its neighbour
	// repositories started from (also.go).
	bases map[*spec.Repo]string
	// guardEnv is the guard environment of every step of the lot (every
	// repository of the wave: pushes fail, foreign ref updates are
	// refused; gitint.PushBlockEnv), added to the step's environment
	// with the lot's own (childEnv).
	guardEnv []string
	// coming is set while the lot counts as coming to its repository's
	// merge queue (queue.go: comingUp).
	coming bool
	// conflictFixed is set once a fix session resolved an integration
	// conflict (on_conflict = "fix" tries once).
	conflictFixed bool
	// logDirMade is set once the lot's log folder exists.
	logDirMade bool
	// pristine is set while the lot's worktrees are as this run made them
	// for a lot that had run no step (clean, HEAD at the start), until its
	// first write session (movement).
	pristine bool
	// tips are where the lot's branch was, per repository, at the end of
	// its last step (lotrefs.go); nil after cadence moved it itself.
	tips map[*spec.Repo]string
	// facts are what the lot's life cycle depends on; from is where the
	// state said the lot goes on when this run took it up.
	facts state.LotFacts
	from  state.Resumption
}

// runLot runs a lot to its end (done, failed, handed back, question,
// suspended) or until ctx is cancelled or a machine error stops it (then
// its running step is recorded interrupted and so is the lot, with the
// cause). Only a failure to record state is returned as an error.
func (r *runner) runLot(ctx context.Context, n *node) (state.LotStatus, error) {
	lr := &lotRun{r: r, n: n, id: n.lot.ID, dir: r.o.Config.Dir,
		logDir: r.o.Layout.LotDir(n.lot.ID)}
	defer lr.giveBackSession()
	defer lr.notComing()
	r.emit(Event{Kind: EvLotStart, Lot: lr.id})
	lr.facts = planner.Facts(n.lot)
	integrated, fresh := false, true
	r.o.Store.View(func(st *state.State) {
		l := st.Lots[lr.id]
		lr.from = state.Resume(lr.facts, l)
		integrated, fresh = state.Integrated(l), l == nil || len(l.Steps) == 0
	})
	var made map[*spec.Repo]bool
	if repo := n.lot.Repo; repo != nil {
		lr.branch = r.lotBranch(n)
		var err error
		if lr.dir, lr.dirs, err = r.lotWorktrees(n.lot, lr.branch); err != nil {
			return "", err
		}
		if integrated {
			// Integrated before cadence stopped (maybe in the middle of
			// removing the worktree): only the tidying is left.
			for _, rp := range n.lot.Repos() {
				_ = r.o.Git.RemoveWorktree(ctx, rp, lr.dirs[rp])
			}
			return lr.end(ctx, state.LotDone, "")
		}
		var base string
		done := r.lots.busy(lr.id) // the worktrees' branches are made
		defer done()
		// made are the worktrees this run makes (not there before): they
		// are set up whatever the state says (setUp).
		made = map[*spec.Repo]bool{}
		for _, rp := range n.lot.Repos() {
			if _, err := os.Stat(lr.dirs[rp]); errors.Is(err, fs.ErrNotExist) {
				made[rp] = true
			}
			b, err := r.o.Git.Worktree(ctx, rp, lr.dirs[rp], lr.branch, fresh)
			if err == nil {
				err = r.o.Git.GuardWorktree(ctx, rp, lr.dirs[rp], lr.branch)
			}
			if err != nil {
				cause := fmt.Sprintf("cannot make the worktree of repo %s: %v", rp.Name, err)
				if ctx.Err() != nil || machineError(err) {
					// Cut short by cadence or by the machine: the next
					// apply makes it again (a half-made one is redone).
					return lr.interrupted(cause)
				}
				return lr.end(ctx, state.LotFailed, cause)
			}
			if rp == repo {
				base = b
			} else {
				lr.setNeighbourBase(rp, b)
			}
		}
		lr.pristine = fresh
		if err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
			l.Status, l.Branch, l.Worktree = state.LotRunning, lr.branch, lr.dir
			if l.BaseSHA == "" {
				l.BaseSHA = base
			}
		}); err != nil {
			return "", err
		}
		done()
	}
	lr.guardEnv = r.stepGuardEnv(ctx)
	if n.lot.Repo != nil {
		if st, ended, err := lr.setUp(ctx, made); ended || err != nil {
			return st, err
		}
	}
	return lr.run(ctx)
}

// lotBranch is the branch of a lot that has a repository: the one the
// state records for it, else the plan's (planner.LotPlan.Branch), else
// (a plan that names none) <planner.Namespace>/<lot>. The state's is the
// truth once recorded (lotWorktrees records it before the branch is made):
// a resumed lot keeps its branch whatever the repositories hold since.
func (r *runner) lotBranch(n *node) string {
	var b string
	r.o.Store.View(func(st *state.State) {
		if l := st.Lots[n.lot.ID]; l != nil {
			b = l.Branch
		}
	})
	switch {
	case b != "":
		return b
	case n.plan.Branch != "":
		return n.plan.Branch
	}
	return planner.LotBranch(planner.Namespace(r.o.Config.Wave.Name), n.lot.ID)
}

// runCommand runs a command lot's run step in its folder and records what
// it committed. A replayed run starts from the commit the lot started
// from: its branch and worktree are reset there first, what an earlier
// attempt left kept under a backup ref (DESIGN.md §6).
func (lr *lotRun) runCommand(ctx context.Context) (state.Outcome, error) {
	if lr.n.lot.Repo != nil {
		if o, stop, err := lr.resetForReplay(ctx); stop || err != nil {
			return o, err
		}
	}
	var before string
	if lr.n.lot.Repo != nil {
		before, _ = lr.r.o.Git.Head(ctx, lr.dir)
	}
	green, msg, err := lr.shell(ctx, state.StepRun, 0, lr.n.lot.Run, lr.n.lot.Timeout)
	if err == nil && lr.n.lot.Repo != nil {
		err = lr.recordCommits()
	}
	if err == nil && green && before != "" {
		err = lr.noteNoChange(before)
	}
	if err == nil && lr.n.lot.Repo != nil {
		err = lr.flagAgentConfig(context.WithoutCancel(ctx)) // agentconfig.go
	}
	if err != nil || ctx.Err() != nil {
		return stopOutcome(ctx, err)
	}
	if !green {
		return state.Outcome{Kind: state.OutcomeRed, Detail: msg}, nil
	}
	return okOutcome, nil
}

// NoChange is the note of a command lot whose run step ended ok without
// a commit (its change is on the base already, e.g. a -replace of a done
// lot): the lot is done with nothing to integrate. It is the run step's
// cause and the done lot's Cause.
const NoChange = "no change: the command committed nothing, so there is nothing to integrate"

// noteNoChange records NoChange on the last step and marks the run when
// the lot's worktree is still at before, the commit the run step started
// from.
func (lr *lotRun) noteNoChange(before string) error {
	head, err := lr.r.o.Git.Head(context.Background(), lr.dir)
	if err != nil || head != before {
		return nil
	}
	lr.noChange = true
	return lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		l.Steps[len(l.Steps)-1].Cause = NoChange
	})
}

// resetForReplay puts the lot's own worktree back to the commit the lot
// started from (its base_sha) before the run step, keeping what an earlier
// attempt left there (commits, changes) under a backup ref recorded in the
// lot's Backups. A first run finds nothing to keep. stop says the reset
// could not be done and the outcome says why (interrupted: the next apply
// tries again).
func (lr *lotRun) resetForReplay(ctx context.Context) (state.Outcome, bool, error) {
	start := lr.startBase()
	if start == "" {
		return state.Outcome{}, false, nil
	}
	defer lr.ownWork()()
	ref, err := lr.r.o.Git.ResetForReplay(ctx, lr.n.lot.Repo, lr.dir, lr.r.o.Config.Wave.Name, lr.id, start)
	if ref != "" {
		lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: state.StepRun, Message: "replayed from " + short(start) + "; the earlier attempt is kept under " + ref})
		if uerr := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Backups = append(l.Backups, ref) }); uerr != nil {
			return state.Outcome{}, true, uerr
		}
	}
	if err != nil {
		return interruptedOutcome("cannot reset the worktree for the replay: " + err.Error()), true, nil
	}
	return state.Outcome{}, false, nil
}

// recordCommits records, on the last step, the commits it added to the
// lot's branch (command lots: what the command committed).
func (lr *lotRun) recordCommits() error {
	ctx := context.Background()
	head, err := lr.r.o.Git.Head(ctx, lr.dir)
	if err != nil {
		return nil
	}
	var base string
	lr.r.o.Store.View(func(st *state.State) { base = st.Lots[lr.id].BaseSHA })
	var known int
	lr.r.o.Store.View(func(st *state.State) {
		for _, s := range st.Lots[lr.id].Steps {
			known += len(s.Commits)
		}
	})
	all, err := lr.r.o.Git.Commits(ctx, lr.dir, base, head)
	if err != nil || len(all) <= known {
		return nil
	}
	return lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		s := &l.Steps[len(l.Steps)-1]
		s.HeadAfter, s.Commits = head, all[known:]
	})
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// beginStep records a new running step and returns its index.
func (lr *lotRun) beginStep(kind state.StepKind, pass int, model string) (int, error) {
	var idx int
	err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		l.Status = state.LotRunning
		l.Steps = append(l.Steps, state.Step{Kind: kind, Pass: pass, Model: model, Started: lr.r.now().UTC(), Status: state.StepRunning})
		idx = len(l.Steps) - 1
	})
	lr.r.emit(Event{Kind: EvStepStart, Lot: lr.id, Step: kind, Pass: pass, Model: model})
	return idx, err
}

// endStep records a step's end.
func (lr *lotRun) endStep(i int, st state.StepStatus, cause string, fn func(*state.Step)) error {
	var kind state.StepKind
	var pass int
	var usage state.Usage
	err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		s := &l.Steps[i]
		t := lr.r.now().UTC()
		s.Status, s.Cause, s.Ended = st, cause, &t
		if fn != nil {
			fn(s)
		}
		kind, pass, usage = s.Kind, s.Pass, s.Usage
	})
	lr.r.emit(Event{Kind: EvStepEnd, Lot: lr.id, Step: kind, Pass: pass, Status: string(st), Usage: usage, Message: cause})
	return err
}

// logPath names a step's log file: <n>-<kind><ext> (layout.Wave.StepFile).
func (lr *lotRun) logPath(i int, kind state.StepKind, ext string) string {
	return lr.r.o.Layout.StepFile(lr.id, i, string(kind), ext)
}

// shell runs a shell command as a step (run or test) in the lot's folder.
// pass is the write pass a test gate follows (fix N: N), recorded on the
// step so that a gate interrupted after fix N resumes into review pass N.
func (lr *lotRun) shell(ctx context.Context, kind state.StepKind, pass int, command string, timeout time.Duration) (bool, string, error) {
	return lr.shellIn(ctx, kind, pass, command, timeout, lr.dir, "")
}

// shellIn runs a shell command as a step in dir, its output to the step's
// log and, grouped, to the console. It returns whether it exited 0 and, if
// not, the last lines of its output. repo names the neighbour repository
// whose worktree dir is ("" for the lot's own: state.Step.Repo).
func (lr *lotRun) shellIn(ctx context.Context, kind state.StepKind, pass int, command string, timeout time.Duration, dir, repo string) (bool, string, error) {
	i, err := lr.beginStep(kind, pass, "")
	if err == nil && repo != "" {
		err = lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Steps[i].Repo = repo })
	}
	if err != nil {
		return false, "", err
	}
	// The log file (and the lot's log folder) is made when the command
	// first writes: a silent command costs no file, which on a busy disk is
	// most of what a small command lot costs. A write that fails ends the
	// step at once (machinestop.go).
	sctx, stopStep := context.WithCancel(ctx)
	defer stopStep()
	f := newStepLog(lr, lr.logPath(i, kind, ".log"), func(error) { stopStep() })
	defer f.Close()
	if timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(sctx, timeout)
		defer cancel()
	}
	// A test gate is run on the commit checked out when it starts: that is
	// the commit it passes (Step.HeadAfter), and one that moves HEAD (a
	// gate that commits, or checks out another commit) is red: what it
	// tested is not what the branch now holds.
	var tested string
	if kind == state.StepTest {
		tested, _ = lr.r.o.Git.Head(ctx, dir)
	}
	var pidErr error
	watch := lr.watchStep(ctx, kind)
	res, rerr := proc.Run(sctx, proc.Cmd{
		Path: "/bin/sh", Args: []string{"-c", command}, Dir: dir,
		Env:    append(append(append([]string{}, lr.r.o.Env...), lr.r.stepEnv(lr.id)...), lr.childEnv(repo)...),
		Marks:  lr.r.stepMarks(lr.id),
		Limits: stepLimits(lr.n.lot.Limits),
		Stdout: f, Stderr: f,
		Started: func(pid int) {
			pidErr = lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Steps[i].PID = pid })
		},
	})
	// The step's own last lines, for its cause (lastOutput): cadence's
	// note below goes to the log only.
	stepOut := f.tail.String()
	// The log's last line says why cadence ended the step, if it did.
	switch {
	case rerr == nil && res.Stopped && ctx.Err() == nil:
		noteInLog(f, timeoutCause(string(kind)+" step", timeout))
	case res.LimitHit != "":
		noteInLog(f, limitCause(string(kind)+" step", lr.n.lot.Limits, res.LimitHit))
	}
	werr := f.Close()
	if pidErr != nil {
		return false, "", pidErr
	}
	if werr != nil {
		// The log could not be written: the machine's error, which stops
		// the wave; the step's tree is ended already (stopStep).
		cause := fmt.Sprintf("%s step: %s", kind, writeFailure(werr, f.path))
		lr.r.machineStop(cause)
		if err := lr.endStep(i, state.StepInterrupted, cause, nil); err != nil {
			return false, "", err
		}
		return false, cause, &interruptedErr{Cause: cause}
	}
	// A cut output is said in the step's cause and recorded (OutputCut).
	cut := cutNote(f.Cut(), lr.n.lot.LogLimit)
	endStep := func(st state.StepStatus, cause string, fn func(*state.Step)) error {
		return lr.endStep(i, st, joinCause(cause, cut), func(s *state.Step) {
			s.OutputCut = f.Cut()
			if fn != nil {
				fn(s)
			}
		})
	}
	if out := f.tail.String(); out != "" && !(res.Stopped && ctx.Err() != nil) {
		lr.r.emit(Event{Kind: EvOutput, Lot: lr.id, Step: kind, Message: out})
	}
	if err := lr.checkStep(ctx, watch, i); err != nil {
		return false, err.Error(), err
	}
	switch {
	case rerr != nil && tooLong(rerr):
		// The command itself cannot be run (plan warns of it): the lot's
		// error, which no replay mends.
		cause := fmt.Sprintf("%s step: the command is %d bytes, more than one argument of sh -c may be (%d): put it in a script file and run that", kind, len(command), spec.MaxArgBytes-1)
		return false, cause, lr.endStep(i, state.StepFailed, cause, nil)
	case rerr != nil:
		// The command could not be started or waited for: the machine's
		// error, never the lot's (an interrupt, §6).
		cause := fmt.Sprintf("%s step: %v", kind, rerr)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			cause = fmt.Sprintf("%s step: its folder %s is gone (the next apply makes the worktree again from the lot's branch)", kind, dir)
		}
		if err := lr.endStep(i, state.StepInterrupted, cause, nil); err != nil {
			return false, "", err
		}
		return false, cause, &interruptedErr{Cause: cause}
	case res.Stopped && ctx.Err() != nil:
		return false, "", endStep(state.StepInterrupted, "stopped by cadence", nil)
	case res.Stopped:
		cause := timeoutCause(string(kind)+" step", timeout)
		return false, joinCause(cause, cut) + lastOutput(stepOut), endStep(state.StepTimedOut, cause, nil)
	case res.LimitHit != "":
		cause := limitCause(string(kind)+" step", lr.n.lot.Limits, res.LimitHit)
		return false, joinCause(cause, cut) + lastOutput(stepOut), endStep(state.StepFailed, cause, nil)
	case res.ExitCode != 0 || res.Signal != 0:
		how := fmt.Sprintf("exit %d", res.ExitCode)
		if res.Signal != 0 {
			how = "killed by signal " + res.Signal.String()
		}
		return false, joinCause(how, cut) + lastOutput(stepOut), endStep(state.StepFailed, how, nil)
	}
	if kind == state.StepTest {
		if head, _ := lr.r.o.Git.Head(ctx, dir); head != tested {
			cause := fmt.Sprintf("the test gate moved HEAD from %s to %s (it committed, reset or checked out): a test gate must leave the branch as it found it", short(tested), shortOr(head, "nothing"))
			cause += lr.putBackAfterGate(ctx, repo, dir, tested)
			return false, cause, endStep(state.StepFailed, cause, nil)
		}
	}
	return true, "", endStep(state.StepOK, "", func(s *state.Step) { s.HeadAfter = tested })
}

// joinCause is cause followed by note ("; "-joined), either maybe empty.
func joinCause(cause, note string) string {
	switch {
	case note == "":
		return cause
	case cause == "":
		return note
	}
	return cause + "; " + note
}

// lastOutput is what a failed step's cause ends with: "; last output:\n"
// and tail, its last lines; "" when the step wrote nothing (or only
// white space), so that a cause never promises output it does not show.
func lastOutput(tail string) string {
	if strings.TrimSpace(tail) == "" {
		return ""
	}
	return "; last output:\n" + tail
}

// interrupted ends the run of a lot whose step did not end by itself
// (cadence's shutdown, a machine error): the lot is interrupted, with the
// cause, for the next apply to resume (DESIGN.md §6). A lot the lead
// dropped or a wave the lead stopped ends as conclude says.
func (lr *lotRun) interrupted(cause string) (state.LotStatus, error) {
	return lr.conclude(state.LotInterrupted, cause)
}

// end records the lot's final status for this run (conclude).
func (lr *lotRun) end(_ context.Context, st state.LotStatus, cause string) (state.LotStatus, error) {
	return lr.conclude(st, cause)
}

// record writes the lot's end for this run: its status and cause (a done
// lot's cause is cleared, or NoChange when its run committed nothing; an
// empty cause keeps the recorded one), and emits it.
func (lr *lotRun) record(st state.LotStatus, cause string) (state.LotStatus, error) {
	if st == state.LotDone && lr.noChange {
		cause = NoChange
	}
	err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		l.Status = st
		if st == state.LotDone {
			l.Cause = cause // "" or NoChange
		} else if cause != "" {
			l.Cause = cause
		}
	})
	lr.r.emit(Event{Kind: EvLotEnd, Lot: lr.id, Status: string(st), Message: cause})
	return st, err
}

// tooLong says the kernel refused a command for its length (E2BIG:
// "argument list too long", Linux's 128 KiB per argument).
func tooLong(err error) bool {
	return errors.Is(err, syscall.E2BIG) || strings.Contains(err.Error(), "argument list too long")
}

// putBackAfterGate puts the lot's branch in the worktree at dir (of the
// repository labelled repo, "" for its own) back at tested, where a test
// gate found it before moving HEAD, keeping what the gate left (commits,
// changes) under the lot's next backup ref (Git.ResetForReplay), so that
// a gate that reset the branch loses none of the lot's commits. It says
// what it did, for the step's cause.
func (lr *lotRun) putBackAfterGate(ctx context.Context, repo, dir, tested string) string {
	rp := lr.n.lot.Repo
	if repo != "" {
		rp = lr.r.o.Config.Repo(repo)
	}
	if rp == nil || tested == "" {
		return ""
	}
	done := lr.r.lots.busy(lr.id) // cadence moves the branch itself
	ref, err := lr.r.o.Git.ResetForReplay(context.WithoutCancel(ctx), rp, dir, lr.r.o.Config.Wave.Name, lr.id, tested)
	done()
	lr.tips = nil
	msg := "; the branch is put back at " + short(tested)
	if ref != "" {
		msg += ", what the gate left kept under " + ref
		if uerr := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Backups = append(l.Backups, ref) }); uerr != nil {
			err = errors.Join(err, uerr)
		}
	}
	if err != nil {
		return "; the branch could not be put back at " + short(tested) + ": " + err.Error()
	}
	return msg
}

// shortOr is short(sha), or none when sha is empty.
func shortOr(sha, none string) string {
	if sha == "" {
		return none
	}
	return short(sha)
}
