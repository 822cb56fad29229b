package executor

import (
	"context"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/step"
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
	// executor/step/guard/checkout.go).
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
	// last is the result of the lot's last command step (shellIn).
	last step.Result
	// roChanged gathers what the attempts of a read-only session changed
	// in the lot's worktrees (step.Result.Changed: readOnlySession).
	roChanged []string
	// ux is what the last UX review's step result said of the
	// application and its browser (step.Result.UX); nil before one.
	ux *step.UXResult
	// pristine is set while the lot's worktrees are as this run made them
	// for a lot that had run no step (clean, HEAD at the start), until its
	// first write session (movement).
	pristine bool
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
			_ = r.steps.RemoveWorktrees(ctx, lr.stepLot())
			return lr.end(ctx, state.LotDone, "")
		}
		p, err := r.steps.Prepare(ctx, step.PrepareRequest{Lot: lr.stepLot(), Fresh: fresh})
		if err == nil && p.Err != "" {
			if ctx.Err() != nil || machineText(p.Err) {
				// Cut short by cadence or by the machine: the next apply
				// makes it again (a half-made one is redone).
				return lr.interrupted(p.Err)
			}
			return lr.end(ctx, state.LotFailed, p.Err)
		}
		if err != nil {
			return "", err
		}
		// made are the worktrees this run made (not there before): they
		// are set up whatever the state says (setUp).
		made = map[*spec.Repo]bool{}
		for _, name := range p.Made {
			made[r.o.Config.Repo(name)] = true
		}
		for _, rp := range n.lot.Also {
			lr.setNeighbourBase(rp, p.Starts[rp.Name])
		}
		base := p.Starts[repo.Name]
		lr.pristine = fresh
		if err := r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
			l.Status, l.Branch, l.Worktree = state.LotRunning, lr.branch, lr.dir
			if l.BaseSHA == "" {
				l.BaseSHA = base
			}
		}); err != nil {
			return "", err
		}
	}
	guardEnv, err := r.stepGuardEnv(ctx)
	if err != nil {
		return lr.interrupted("cannot get the guard environment of the wave's steps: " + err.Error())
	}
	lr.guardEnv = guardEnv
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
	case n.plan != nil && n.plan.Branch != "": // a node without a plan: the state's or the default
		return n.plan.Branch
	}
	return planner.LotBranch(planner.Namespace(r.o.Config.Wave.Name), n.lot.ID)
}

// runCommand runs a command lot's run step in its folder and records what
// it committed. A replayed run starts from the commit the lot started
// from: its branch and worktree are reset there first, what an earlier
// attempt left kept under a backup ref (docs/running.md).
func (lr *lotRun) runCommand(ctx context.Context) (state.Outcome, error) {
	if lr.n.lot.Repo != nil {
		if o, stop, err := lr.resetForReplay(ctx); stop || err != nil {
			return o, err
		}
	}
	green, msg, err := lr.shell(ctx, state.StepRun, 0, lr.n.lot.Run, lr.n.lot.Timeout)
	before, after := lr.last.HeadBefore, lr.last.HeadAfter
	if err == nil && lr.n.lot.Repo != nil {
		err = lr.recordCommits()
	}
	if err == nil && green && before != "" {
		err = lr.noteNoChange(before, after)
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
// from (head: where it ended; step.Result's heads).
func (lr *lotRun) noteNoChange(before, head string) error {
	if head != before {
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
	ref, err := lr.r.steps.ResetForReplay(ctx, lr.stepLot(), "", start)
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
	var base string
	lr.r.o.Store.View(func(st *state.State) { base = st.Lots[lr.id].BaseSHA })
	own := lr.look(context.Background(), step.LookRequest{From: map[string]string{lr.n.lot.Repo.Name: base}, Commits: true}, true)[lr.n.lot.Repo.Name]
	head := own.Head
	if head == "" || own.Err != "" {
		return nil
	}
	var known int
	lr.r.o.Store.View(func(st *state.State) {
		for _, s := range st.Lots[lr.id].Steps {
			known += len(s.Commits)
		}
	})
	all := own.Commits
	if len(all) <= known {
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

// beginSession records the begin of the session step req: its kind, pass
// and model, and the agent it runs with (its name and kind, the vendor),
// so that a resumed or recounted step keeps the agent it ran with.
func (lr *lotRun) beginSession(req step.Request) (int, error) {
	vendor := ""
	if a := lr.r.o.Config.Agent(req.Agent); a != nil {
		vendor = a.Kind
	}
	var idx int
	err := lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) {
		l.Status = state.LotRunning
		s := state.Step{Kind: req.Kind, Pass: req.Pass, Model: req.Model, Started: lr.r.now().UTC(), Status: state.StepRunning}
		if vendor != "" {
			s.Agent, s.Vendor = req.Agent, vendor
		}
		l.Steps = append(l.Steps, s)
		idx = len(l.Steps) - 1
	})
	lr.r.emit(Event{Kind: EvStepStart, Lot: lr.id, Step: req.Kind, Pass: req.Pass, Model: req.Model})
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
	return lr.shellIn(ctx, kind, pass, command, timeout, lr.dir, "", false)
}

// shellIn runs a shell command as a step in dir through the step runner
// (step.Request of kind run or test), its output to the step's log and,
// grouped, to the console. It returns whether it exited 0 and, if not,
// why with the last lines of its output. repo names the neighbour
// repository whose worktree dir is ("" for the lot's own:
// state.Step.Repo). The error is an *interruptedErr (the machine's
// error), an *incidentErr (a guard's incident: the step is failed) or
// the journal's.
func (lr *lotRun) shellIn(ctx context.Context, kind state.StepKind, pass int, command string, timeout time.Duration, dir, repo string, integrating bool) (bool, string, error) {
	req := lr.request(kind, pass)
	req.Dir, req.Repo, req.Command, req.Timeout, req.Integrating = dir, repo, command, timeout, integrating
	req.Env = lr.childEnv(repo)
	var idx int
	lr.r.o.Store.View(func(st *state.State) {
		if l := st.Lots[lr.id]; l != nil {
			idx = len(l.Steps)
		}
	})
	req.Log = lr.logPath(idx, kind, ".log")
	res, got, err := lr.runStep(ctx, req, func() (int, error) {
		i, err := lr.beginStep(kind, pass, "")
		if err == nil && repo != "" {
			err = lr.r.o.Store.UpdateLot(lr.id, func(l *state.Lot) { l.Steps[i].Repo = repo })
		}
		return i, err
	})
	lr.last = res
	if err == nil {
		err = got.err
	}
	if err != nil {
		return false, "", err
	}
	if got.index < 0 {
		return false, "", &interruptedErr{Cause: joinCause("stopped by cadence", res.Cause)}
	}
	end := func(cause string, fn func(*state.Step)) error {
		return lr.endStep(got.index, res.Status, cause, func(s *state.Step) {
			s.OutputCut = res.OutputCut
			if fn != nil {
				fn(s)
			}
		})
	}
	switch {
	case res.WriteFailed || res.Unstarted:
		if err := end(res.Cause, nil); err != nil {
			return false, "", err
		}
		return false, res.Cause, &interruptedErr{Cause: res.Cause}
	case res.Incident != "" && res.Status == state.StepFailed:
		if err := end(res.Cause, nil); err != nil {
			return false, "", err
		}
		return false, res.Cause, &incidentErr{Cause: res.Cause}
	case res.Status == state.StepInterrupted:
		return false, "", end(res.Cause, nil)
	case res.Status != state.StepOK:
		return false, res.Cause + lastOutput(res.Output), end(res.Cause, nil)
	}
	return true, "", end(res.Cause, func(s *state.Step) { s.HeadAfter = res.HeadAfter })
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
// cause, for the next apply to resume (docs/running.md). A lot the lead
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
