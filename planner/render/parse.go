package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// ParseJSON reads a plan's JSON form (what JSON writes, plan -json) back
// into a plan, for cadence show of a saved plan: JSON of the result gives
// the same document again, and Text and Markdown render it as plan did.
// What the JSON form does not carry is zero in the result: the agent's
// version probe details, the usage-limit reset time (the quota line, which
// depends on the clock anyway) and whether spent dollars were estimated.
// Durations come back in whole seconds. It fails on malformed JSON, a
// format_version other than planner.FormatVersion, and values out of their
// enums (a lot kind, a dollar amount).
func ParseJSON(b []byte) (*planner.Plan, error) {
	var j jsonPlan
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("plan JSON: %w", err)
	}
	if j.FormatVersion != planner.FormatVersion {
		return nil, fmt.Errorf("plan JSON of format %d; this cadence reads %d", j.FormatVersion, planner.FormatVersion)
	}
	return fromJSON(&j)
}

func fromJSON(j *jsonPlan) (*planner.Plan, error) {
	p := &planner.Plan{
		FormatVersion: j.FormatVersion, Wave: j.Wave, File: j.File, Offline: j.Offline,
		WaveDigest: j.WaveDigest, StateDigest: j.StateDigest,
		Targets: nilIfEmpty(j.Targets), Replace: nilIfEmpty(j.Replace), APIFailure: j.APIFailure,
		Lots: make([]planner.LotPlan, len(j.Lots)), Repos: make([]planner.RepoPlan, len(j.Repos)),
	}
	for i, l := range j.Lots {
		kind, err := lotKind(l.Kind)
		if err != nil {
			return nil, fmt.Errorf("plan JSON: lot %s: %w", l.ID, err)
		}
		held := state.LotStatus(l.HeldStatus)
		if held != "" && held != state.LotHandedBack && held != state.LotFailed {
			return nil, fmt.Errorf("plan JSON: lot %s: unknown held_status %q", l.ID, l.HeldStatus)
		}
		lp := planner.LotPlan{
			ID: l.ID, Title: l.Title, Kind: kind, Action: planner.Action(l.Action), Reason: l.Reason,
			HeldStatus: held,
			BlockedBy:  nilIfEmpty(l.BlockedBy), Repo: l.Repo, Branch: l.Branch, Also: nilIfEmpty(l.Also), DependsOn: nilIfEmpty(l.DependsOn),
			Steps: make([]planner.Step, len(l.Steps)), FallbackModel: l.FallbackModel, Budget: spec.Tokens(l.BudgetTokens), Spent: l.SpentTokens,
			Estimate: secs(l.EstimateSeconds), EstimateSet: l.EstimateSet, Remaining: secs(l.RemainingSeconds),
			Timeout: secs(l.TimeoutSeconds), ReviewTimeout: secs(l.ReviewTimeoutSeconds),
			Env: nilIfEmpty(l.Env), PathPrepend: nilIfEmpty(l.PathPrepend),
		}
		if l.ResumeAt != nil {
			lp.ResumeAt = &planner.Resume{Step: state.StepKind(l.ResumeAt.Step), Pass: l.ResumeAt.Pass}
		}
		for _, b := range l.Bootstrap {
			lp.Bootstrap = append(lp.Bootstrap, planner.Bootstrap{Repo: b.Repo, Submodules: b.Submodules, Copy: nilIfEmpty(b.Copy), Setup: b.Setup})
		}
		for k, s := range l.Steps {
			lp.Steps[k] = planner.Step{Kind: state.StepKind(s.Kind), Model: s.Model, Agent: s.Agent, AgentKind: s.AgentKind, Fallback: s.FallbackModel, Max: s.Max}
		}
		p.Lots[i] = lp
	}
	for i, r := range j.Repos {
		p.Repos[i] = planner.RepoPlan{Name: r.Name, Path: r.Path, Base: r.Base, BaseSHA: r.BaseSHA, Test: r.Test,
			ProbableTest: r.ProbableTest, Parallel: r.Parallel, Lots: r.Lots, TestTimeout: secs(r.TestTimeoutSeconds),
			Pushes: planner.Pushes(r.Pushes), PushesReason: r.PushesReason,
			Toolchain: r.Toolchain, ToolchainPath: nilIfEmpty(r.ToolchainPath), ToolchainErr: r.ToolchainErr}
		if len(r.ToolchainEnv) > 0 {
			// The JSON holds the names only: a value is never shown.
			p.Repos[i].ToolchainEnv = map[string]string{}
			for _, n := range r.ToolchainEnv {
				p.Repos[i].ToolchainEnv[n] = ""
			}
		}
	}
	t := j.Totals
	budgetUSD, err := usd(t.BudgetUSD)
	if err != nil {
		return nil, fmt.Errorf("plan JSON: totals.budget_usd: %w", err)
	}
	spentUSD, err := usd(t.SpentUSD)
	if err != nil {
		return nil, fmt.Errorf("plan JSON: totals.spent_usd: %w", err)
	}
	p.Totals = planner.Totals{
		Lots: t.Lots, ByAction: map[planner.Action]int{}, Outside: t.Outside,
		PendingAgent: t.PendingAgent, PendingCommand: t.PendingCommand,
		Ceiling: spec.Tokens(t.CeilingTokens), Unbounded: t.Unbounded,
		Budget: spec.Tokens(t.BudgetTokens), BudgetUSD: budgetUSD,
		Spent: t.SpentTokens, SpentMicro: int64(spentUSD),
		MaxSessions: t.MaxSessions, Sessions: t.Sessions, Holds: t.Holds, Jobs: t.Jobs,
		CriticalPath: secs(t.CriticalPathSeconds), Estimate: secs(t.EstimateSeconds),
		SessionsFrom: planner.CapSource(t.SessionsFrom), JobsFrom: planner.CapSource(t.JobsFrom),
		Agents: concurrencyPlan(t.Agents), Commands: concurrencyPlan(t.Commands),
	}
	for a, n := range t.ByAction {
		if n != 0 {
			p.Totals.ByAction[planner.Action(a)] = n
		}
	}
	for _, w := range j.Warnings {
		p.Warnings = append(p.Warnings, planner.Warning{Kind: planner.WarningKind(w.Kind), Subject: w.Subject,
			Message: w.Message, Refuses: w.Refuses, Files: nilIfEmpty(w.Files), LotIDs: nilIfEmpty(w.LotIDs)})
	}
	if a := j.Agent; a != nil {
		p.Agent = planner.AgentFacts{Command: a.Command, Path: a.Path, Version: a.Version}
		if a.Error != "" {
			p.Agent.Err = errors.New(a.Error)
		}
	}
	if x := j.Executor; x != nil {
		e := &planner.ExecutorPlan{Kind: x.Kind, URL: x.URL, Queue: x.Queue, Remote: nilIfEmpty(x.Remote), Lease: secs(x.LeaseSeconds),
			Asked: x.Asked, Err: x.Error, Pool: planner.RemotePool{Cap: x.Pool.Cap, InFlight: x.Pool.InFlight, Free: x.Pool.Free, Queued: x.Pool.Queued}}
		for _, w := range x.Workers {
			agents := w.Agents
			if len(agents) == 0 {
				agents = nil
			}
			e.Workers = append(e.Workers, planner.RemoteWorker{ID: w.ID, Agents: agents, Toolchains: nilIfEmpty(w.Toolchains), Slots: w.Slots, Free: w.Free})
		}
		p.Executor = e
	}
	if pv := j.Pinned; pv != nil {
		p.Pinned = &planner.Pinned{Cadence: pv.CadenceVersion, Agent: pv.AgentVersion}
	}
	return p, nil
}

// lotKind is the spec.LotKind of its String form.
func lotKind(s string) (spec.LotKind, error) {
	switch s {
	case spec.AgentLot.String():
		return spec.AgentLot, nil
	case spec.CommandLot.String():
		return spec.CommandLot, nil
	}
	return 0, fmt.Errorf("unknown lot kind %q", s)
}

// usd reads a dollar amount of the JSON form ("" is none).
func usd(s string) (spec.USD, error) {
	if s == "" {
		return 0, nil
	}
	return spec.ParseUSD(s)
}

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }

// nilIfEmpty is list's inverse: [] becomes nil.
func nilIfEmpty(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	return xs
}
