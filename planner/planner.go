package planner

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// Options shape a plan.
type Options struct {
	// Targets limits the plan to these lots and their dependencies.
	Targets []string
	// Replace lists lots to run again even if done.
	Replace []string
	// Budget, when above zero, raises the wave budget (apply -budget).
	Budget spec.Tokens
	// BudgetUSD, when above zero, raises the wave's dollar ceiling
	// (budget_usd; apply -budget-usd).
	BudgetUSD spec.USD
	// MaxSessions, when above zero, overrides the wave's session cap;
	// MaxSessionsFrom says where it comes from (CapFlag when "": the
	// caller may say CapEnv).
	MaxSessions     int
	MaxSessionsFrom CapSource
	// Jobs, when above zero, is the command-lot cap (default: CPUs).
	Jobs int
	// WaveDigest identifies the wave file's bytes.
	WaveDigest string
	// CadenceVersion is the cadence making the plan, as `cadence version`
	// says it (the CLI's; "" skips the check): compared with the one the
	// state records (state.State.CadenceVersion, pinned).
	CadenceVersion string
	// Upgrade is apply -upgrade: another cadence than the one that
	// started the wave is a warning, not a refusal (the run records it).
	Upgrade bool
	// LocalOnly runs every step on this machine whatever the wave's
	// executor block says (apply -executor local, CADENCE_EXECUTOR=local).
	LocalOnly bool
}

// Input is what a plan is made from.
type Input struct {
	Config *spec.Config
	// State is the wave's state file, nil when there is none yet.
	State *state.State
	// StateDigest identifies the state file's bytes ("" without one).
	StateDigest string
	// Machine gathers preflight facts; nil makes an offline plan.
	Machine Machine
	Options Options
}

// Build makes the plan. Problems that make the plan impossible (an unknown
// -target, a repository that is not there) are error diagnostics, pointing
// at the wave file where they can; things the lead should know are Warnings.
func Build(in Input) (*Plan, hcl.Diagnostics) {
	cfg, opts := in.Config, in.Options
	b := &builder{cfg: cfg, st: in.State, opts: opts, plan: &Plan{
		FormatVersion: FormatVersion,
		Wave:          cfg.Wave.Name,
		File:          cfg.File,
		Offline:       in.Machine == nil,
		WaveDigest:    opts.WaveDigest,
		StateDigest:   in.StateDigest,
		Targets:       opts.Targets,
		Replace:       opts.Replace,
	}}
	if b.st == nil {
		b.st = &state.State{Lots: map[string]*state.Lot{}}
	}
	if b.st.ResetAt != nil {
		t := *b.st.ResetAt
		b.plan.ResetAt = &t
	}
	b.plan.OnQuota = cfg.Wave.OnQuota
	b.plan.APIFailure = apiFailure(b.st)
	b.selectLots()
	b.replace = b.idSet(opts.Replace, "-replace")
	if b.diags.HasErrors() {
		return nil, b.diags
	}
	b.decideActions()
	b.preflight(in.Machine) // may refuse lots (refuseToolchains): before planLots copies them
	b.planLots()
	if hm, ok := in.Machine.(HoldsMachine); ok {
		b.holds = max(0, hm.LiveHolds())
	}
	b.totals()
	if !opts.LocalOnly {
		b.planExecutor(in.Machine)
	}
	if lm, ok := in.Machine.(LimitsMachine); ok {
		b.plan.Totals.LimitsEnforced = lm.Limits(b.plan.limitsSet())
	}
	b.warnings()
	b.pinned()
	return b.plan, b.diags
}

type builder struct {
	cfg      *spec.Config
	st       *state.State
	opts     Options
	plan     *Plan
	diags    hcl.Diagnostics
	selected []*spec.Lot // the lots in the plan, file order
	replace  map[string]bool
	actions  map[*spec.Lot]*LotPlan
	holds    int // live holds on the machine (HoldsMachine)
	// gitmodules says per inspected repository whether its base has a
	// .gitmodules (RepoFacts.Gitmodules); nil offline.
	gitmodules map[*spec.Repo]bool
	// branch is the branch of each selected lot with a repository
	// (lotBranches).
	branch map[*spec.Lot]string
}

// idSet checks lot ids given on the command line.
func (b *builder) idSet(ids []string, flag string) map[string]bool {
	out := map[string]bool{}
	var all []string
	for _, id := range ids {
		if b.cfg.Lot(id) != nil {
			out[id] = true
			continue
		}
		if all == nil {
			for _, l := range b.cfg.Lots {
				all = append(all, l.ID)
			}
		}
		detail := fmt.Sprintf("%s %s: the wave has no lot %q.", flag, id, id)
		if s := spec.Suggest(id, all); s != "" {
			detail += fmt.Sprintf(" Did you mean %q?", s)
		}
		b.diags = append(b.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown lot in " + flag, Detail: detail})
	}
	return out
}

// selectLots keeps the -target lots and everything they depend on.
func (b *builder) selectLots() {
	targets := b.idSet(b.opts.Targets, "-target")
	if len(b.opts.Targets) == 0 {
		b.selected = b.cfg.Lots
		return
	}
	var roots []*spec.Lot
	for _, l := range b.cfg.Lots {
		if targets[l.ID] {
			roots = append(roots, l)
		}
	}
	b.selected = b.cfg.Graph().Ancestors(roots...)
	sort.Slice(b.selected, func(i, j int) bool { return b.selected[i].Index < b.selected[j].Index })
	b.plan.Totals.Outside = len(b.cfg.Lots) - len(b.selected)
}

// decideActions sets each selected lot's action from the state file, in
// dependency order so that blocking propagates.
func (b *builder) decideActions() {
	b.actions = make(map[*spec.Lot]*LotPlan, len(b.selected))
	for _, l := range b.selected {
		// A plan is shown (and posted on pull requests): it holds
		// spec.Redacted for a sensitive value, never the value.
		lp := &LotPlan{ID: l.ID, Title: l.Sensitive.Show("title", l.Title), Kind: l.Kind,
			Timeout: l.Timeout, ReviewTimeout: l.ReviewTimeout, Limits: l.Limits}
		b.actions[l] = lp
		sl := b.st.Lots[l.ID]
		if sl != nil {
			lp.Spent = sl.Usage().Counted()
		}
		if b.replace[l.ID] {
			lp.Action = ActionReplace
			continue
		}
		r := state.Resume(Facts(l), sl)
		switch r.Kind {
		case state.ResumeStart:
			lp.Action = ActionRun
		case state.ResumeDone:
			lp.Action = ActionDone
		case state.ResumeHeld:
			lp.Action, lp.Reason, lp.HeldStatus = ActionHeld, r.Reason, r.Status
		case state.ResumeAnswer:
			lp.Action, lp.Reason = ActionAnswer, r.Reason
		default:
			lp.Action, lp.ResumeAt = ActionResume, &Resume{Step: r.At.Step, Pass: r.At.Pass}
		}
	}
	b.blockDependents()
}

// blockDependents blocks every lot (not done, held or refused) with a
// dependency that is held, refused or blocked, in dependency order so
// that blocking propagates, and says why in its Reason. It may run again
// after more lots were refused (refuseToolchains): a lot keeps its
// blockers and gains the new ones.
func (b *builder) blockDependents() {
	order, _ := b.cfg.Graph().TopoOrder()
	for _, l := range order {
		lp := b.actions[l]
		if lp == nil || lp.Action == ActionDone || lp.Action == ActionHeld || lp.Action == ActionRefused {
			continue
		}
		for _, dep := range l.DependsOn {
			dp := b.actions[dep]
			if dp == nil || (dp.Action != ActionHeld && dp.Action != ActionRefused && dp.Action != ActionBlocked) || slices.Contains(lp.BlockedBy, dep.ID) {
				continue
			}
			lp.Action, lp.ResumeAt = ActionBlocked, nil
			lp.BlockedBy = append(lp.BlockedBy, dep.ID)
		}
		if lp.Action == ActionBlocked {
			var why []string
			for _, id := range lp.BlockedBy {
				switch dp := b.actions[b.cfg.Lot(id)]; dp.Action {
				case ActionHeld:
					status := dp.HeldStatus
					if status == "" {
						status = b.st.Lots[id].Status
					}
					why = append(why, id+" "+string(status))
				case ActionRefused:
					why = append(why, id+" refused")
				default:
					why = append(why, id+" blocked")
				}
			}
			lp.Reason = strings.Join(why, ", ")
		}
	}
}

// apiFailure is what to fix after an API failure suspended the wave (st's
// status suspended-api): the cause of its first suspended lot, by id, that
// records one (the executor writes apiAdvice's sentence there), else
// apiFailureUnknown; "" when the wave is not suspended-api.
func apiFailure(st *state.State) string {
	if st.Status != state.WaveSuspendedAPI {
		return ""
	}
	for _, id := range slices.Sorted(maps.Keys(st.Lots)) {
		if l := st.Lots[id]; l != nil && l.Status == state.LotSuspended && l.Cause != "" {
			return l.Cause
		}
	}
	return apiFailureUnknown
}

// apiFailureUnknown is Plan.APIFailure when no suspended lot records the
// cause.
const apiFailureUnknown = "the agent's API failed (cadence logs shows the last sessions): fix what they name"

// Facts are the facts of a lot's definition that its life cycle depends
// on (state.Resume, state.Next); the executor runs with the same.
func Facts(l *spec.Lot) state.LotFacts {
	f := state.LotFacts{Command: l.Kind == spec.CommandLot, Repo: l.Repo != nil,
		Precheck: l.Precheck, FixPasses: l.FixPasses, Small: l.Small, UX: l.UXReview()}
	// A test gate runs when any of the lot's repositories (own or also)
	// has a test command, each in its own worktree.
	for _, rp := range l.Repos() {
		if l.Repo != nil && rp.Test != "" {
			f.TestGate = true
			f.Gates++
		}
	}
	return f
}

// planLots fills steps, repos and estimates, and computes each lot's
// remaining critical path over pending lots.
func (b *builder) planLots() {
	g := b.cfg.Graph()
	remaining, _ := g.LongestPaths(func(l *spec.Lot) float64 {
		if lp := b.actions[l]; lp != nil && lp.Action.Pending() {
			return float64(l.Estimate)
		}
		return 0
	})
	b.plan.Lots = make([]LotPlan, 0, len(b.selected)) // sized: it lives as long as the plan
	for _, l := range b.selected {
		lp := b.actions[l]
		if l.Repo != nil {
			lp.Repo = l.Repo.Name
		}
		for _, r := range l.Also {
			lp.Also = append(lp.Also, r.Name)
		}
		if len(l.DependsOn) > 0 {
			lp.DependsOn = make([]string, 0, len(l.DependsOn))
		}
		for _, d := range l.DependsOn {
			lp.DependsOn = append(lp.DependsOn, d.ID)
		}
		lp.Steps = Steps(l)
		for i := range lp.Steps {
			if info, _ := state.Info(lp.Steps[i].Kind); info.Model == state.ModelWrite {
				lp.Steps[i].Model = l.Sensitive.Show("model", lp.Steps[i].Model)
			} else {
				lp.Steps[i].Model = l.Sensitive.Show("review_model", lp.Steps[i].Model)
			}
		}
		if l.Kind == spec.AgentLot {
			lp.FallbackModel = l.FallbackModel
		}
		lp.Budget, lp.Estimate, lp.EstimateSet = l.Budget, l.Estimate, l.EstimateSet
		lp.Env, lp.PathPrepend = lotEnv(l)
		lp.Bootstrap = bootstraps(l, b.gitmodules)
		lp.Branch = b.branch[l]
		if lp.Action.Pending() {
			lp.Remaining = time.Duration(remaining[l])
		}
		b.plan.Lots = append(b.plan.Lots, *lp)
	}
}

// Steps are the session steps a lot runs, in order, as the life cycle
// (state.Start, state.Next) walks them when every step goes well, then
// the write step a not-conform verdict leads to, with its most passes
// (Max): a command lot's run step alone. A step kind the life cycle
// reaches is planned with no list to keep here.
func Steps(l *spec.Lot) []Step {
	if l.Kind == spec.CommandLot {
		return []Step{{Kind: state.StepRun}}
	}
	f := Facts(l)
	var s []Step
	var fix *state.Position
	at := state.Start(f)
	for range len(state.Kinds()) * 2 { // the happy path visits each kind at most once or twice
		info, _ := state.Info(at.Step)
		if info.Runs == state.RunsAgent {
			s = append(s, sessionStep(l, at.Step, 0))
		}
		if info.RecordsVerdict && fix == nil {
			if t := state.Next(f, at, state.Outcome{Kind: state.OutcomeNotConform}); t.GoesOn() {
				fix = t.At
			}
		}
		t := state.Next(f, at, state.Outcome{Kind: state.OutcomeOK})
		if !t.GoesOn() {
			break
		}
		at = *t.At
	}
	if fix != nil && f.FixPasses > 0 {
		s = append(s, sessionStep(l, fix.Step, f.FixPasses))
	}
	return s
}

// sessionStep is the planned session step of kind of agent lot l, with
// the agent, model and fallback StepAgent gives it (the model not yet
// redacted).
func sessionStep(l *spec.Lot, kind state.StepKind, max int) Step {
	a, model, fallback := StepAgent(l, kind)
	s := Step{Kind: kind, Model: model, Fallback: fallback, Max: max}
	if a != nil {
		s.Agent, s.AgentKind = a.Name, a.Kind
	}
	return s
}

func (b *builder) jobs() int {
	if b.opts.Jobs > 0 {
		return b.opts.Jobs
	}
	return runtime.NumCPU()
}

// jobsFrom says where jobs() comes from.
func (b *builder) jobsFrom() CapSource {
	if b.opts.Jobs > 0 {
		return CapFlag
	}
	return CapCPUs
}

// maxSessionsFrom says where maxSessions() comes from.
func (b *builder) maxSessionsFrom() CapSource {
	switch {
	case b.opts.MaxSessions > 0 && b.opts.MaxSessionsFrom != "":
		return b.opts.MaxSessionsFrom
	case b.opts.MaxSessions > 0:
		return CapFlag
	}
	return CapWave
}

func (b *builder) maxSessions() int {
	if b.opts.MaxSessions > 0 {
		return b.opts.MaxSessions
	}
	return b.cfg.Wave.MaxSessions
}
