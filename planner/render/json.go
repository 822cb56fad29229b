package render

import (
	"encoding/json"
	"io"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// The JSON form of a plan (plan -json), described by
// schemas/plan.schema.json. It is a transfer object of its own, not the
// planner's Go structs, so that the Go types can change without breaking
// readers. Its rules:
//
//   - keys are snake_case, and every key is always present: an absent value
//     is "", 0, false, [] or, for resume_at and agent, null;
//   - token counts are integers (budget_tokens, spent_tokens, ...), 0 meaning
//     no budget;
//   - durations are whole seconds, rounded (estimate_seconds, ...);
//   - dollar amounts are exact decimal strings without "$", with cents and
//     more digits only when needed: "40.00", "3.125" (budget_usd, spent_usd);
//     "0.00" means no dollar ceiling;
//   - actions, lot kinds, step kinds, warning kinds and a repository's
//     pushes ("prevented", "detected", "unknown" offline, "" when no
//     pending lot works in it) are strings (enums in the schema);
//   - repository paths are relative to the wave file's folder (see the
//     package documentation).
//
// format_version is planner.FormatVersion; it changes when a key is removed
// or changes meaning.

type jsonPlan struct {
	FormatVersion int           `json:"format_version"`
	Wave          string        `json:"wave"`
	File          string        `json:"file"`
	Offline       bool          `json:"offline"`
	WaveDigest    string        `json:"wave_digest"`
	StateDigest   string        `json:"state_digest"`
	Targets       []string      `json:"targets"`
	Replace       []string      `json:"replace"`
	Lots          []jsonLot     `json:"lots"`
	Repos         []jsonRepo    `json:"repos"`
	Totals        jsonTotals    `json:"totals"`
	Warnings      []jsonWarning `json:"warnings"`
	Agent         *jsonAgent    `json:"agent"`
	// APIFailure is planner.Plan.APIFailure: what to fix after an API
	// failure suspended the wave; "" when it is not suspended-api.
	APIFailure string `json:"api_failure"`
	// Pinned is absent when the plan has none (planner.Plan.Pinned).
	Pinned *jsonPinned `json:"pinned,omitempty"`
	// Executor is planner.Plan.Executor, absent when every step runs on
	// this machine.
	Executor *jsonExecutor `json:"executor,omitempty"`
}

// jsonExecutor is planner.ExecutorPlan; workers and pool are what the
// engine said ("asked": false offline, or "error" when it could not be
// asked).
type jsonExecutor struct {
	Kind         string       `json:"kind"`
	URL          string       `json:"url"`
	Queue        string       `json:"queue"`
	Remote       []string     `json:"remote"`
	LeaseSeconds int64        `json:"lease_seconds"`
	Asked        bool         `json:"asked"`
	Error        string       `json:"error"`
	Workers      []jsonWorker `json:"workers"`
	Pool         jsonPool     `json:"pool"`
}

type jsonWorker struct {
	ID         string            `json:"id"`
	Agents     map[string]string `json:"agents"`
	Toolchains []string          `json:"toolchains"`
	Slots      int               `json:"slots"`
	Free       int               `json:"free"`
}

type jsonPool struct {
	Cap      int    `json:"cap"`
	InFlight int    `json:"in_flight"`
	Free     int    `json:"free"`
	Queued   uint64 `json:"queued"`
}

func executorJSON(x *planner.ExecutorPlan) *jsonExecutor {
	if x == nil {
		return nil
	}
	out := &jsonExecutor{Kind: x.Kind, URL: x.URL, Queue: x.Queue, Remote: list(x.Remote), LeaseSeconds: seconds(x.Lease),
		Asked: x.Asked, Error: x.Err, Workers: []jsonWorker{},
		Pool: jsonPool{Cap: x.Pool.Cap, InFlight: x.Pool.InFlight, Free: x.Pool.Free, Queued: x.Pool.Queued}}
	for _, w := range x.Workers {
		agents := w.Agents
		if agents == nil {
			agents = map[string]string{}
		}
		out.Workers = append(out.Workers, jsonWorker{ID: w.ID, Agents: agents, Toolchains: list(w.Toolchains), Slots: w.Slots, Free: w.Free})
	}
	return out
}

type jsonPinned struct {
	CadenceVersion string `json:"cadence_version"`
	AgentVersion   string `json:"agent_version"`
}

type jsonLot struct {
	ID       string      `json:"id"`
	Title    string      `json:"title"`
	Kind     string      `json:"kind"`
	Action   string      `json:"action"`
	ResumeAt *jsonResume `json:"resume_at"`
	Reason   string      `json:"reason"`
	// HeldStatus is planner.LotPlan.HeldStatus: "handed-back" or "failed"
	// for a held lot, absent otherwise.
	HeldStatus string   `json:"held_status,omitempty"`
	BlockedBy  []string `json:"blocked_by"`
	Repo       string   `json:"repo"`
	// Branch is planner.LotPlan.Branch: "" for a lot without a repository.
	Branch    string     `json:"branch"`
	Also      []string   `json:"also"`
	DependsOn []string   `json:"depends_on"`
	Steps     []jsonStep `json:"steps"`
	// FallbackModel is planner.LotPlan.FallbackModel: "" for none.
	FallbackModel    string `json:"fallback_model"`
	BudgetTokens     int64  `json:"budget_tokens"`
	SpentTokens      int64  `json:"spent_tokens"`
	EstimateSeconds  int64  `json:"estimate_seconds"`
	EstimateSet      bool   `json:"estimate_set"`
	RemainingSeconds int64  `json:"remaining_seconds"`
	// TimeoutSeconds and ReviewTimeoutSeconds are planner.LotPlan's
	// Timeout and ReviewTimeout; 0 for none.
	TimeoutSeconds       int64    `json:"timeout_seconds"`
	ReviewTimeoutSeconds int64    `json:"review_timeout_seconds"`
	Env                  []string `json:"env"`
	PathPrepend          []string `json:"path_prepend"`
	// Bootstrap is planner.LotPlan.Bootstrap; absent when the lot's
	// worktrees get nothing.
	Bootstrap []jsonBootstrap `json:"bootstrap,omitempty"`
}

type jsonBootstrap struct {
	Repo       string   `json:"repo"`
	Submodules string   `json:"submodules"`
	Copy       []string `json:"copy"`
	Setup      string   `json:"setup"`
}

type jsonResume struct {
	Step string `json:"step"`
	Pass int    `json:"pass"`
}

type jsonStep struct {
	Kind  string `json:"kind"`
	Model string `json:"model"`
	// Agent, AgentKind and FallbackModel are planner.Step's Agent,
	// AgentKind and Fallback ("" for a command).
	Agent         string `json:"agent"`
	AgentKind     string `json:"agent_kind"`
	FallbackModel string `json:"fallback_model"`
	Max           int    `json:"max"`
}

type jsonRepo struct {
	Name         string `json:"name"`
	Path         string `json:"path"`
	Base         string `json:"base"`
	BaseSHA      string `json:"base_sha"`
	Test         string `json:"test"`
	ProbableTest string `json:"probable_test"`
	Parallel     int    `json:"parallel"`
	// TestTimeoutSeconds is planner.RepoPlan.TestTimeout; 0 for none.
	TestTimeoutSeconds int64  `json:"test_timeout_seconds"`
	Lots               int    `json:"lots"`
	Pushes             string `json:"pushes"`
	PushesReason       string `json:"pushes_reason"`
	// Toolchain, ToolchainPath and ToolchainErr: RepoPlan's;
	// ToolchainEnv the names of RepoPlan.ToolchainEnv, sorted (never the
	// values).
	Toolchain     string   `json:"toolchain"`
	ToolchainPath []string `json:"toolchain_path"`
	ToolchainEnv  []string `json:"toolchain_env"`
	ToolchainErr  string   `json:"toolchain_error"`
}

type jsonTotals struct {
	Lots                int             `json:"lots"`
	ByAction            map[string]int  `json:"by_action"`
	Outside             int             `json:"outside"`
	PendingAgent        int             `json:"pending_agent"`
	PendingCommand      int             `json:"pending_command"`
	CeilingTokens       int64           `json:"ceiling_tokens"`
	Unbounded           int             `json:"unbounded"`
	BudgetTokens        int64           `json:"budget_tokens"`
	BudgetUSD           string          `json:"budget_usd"`
	SpentTokens         int64           `json:"spent_tokens"`
	SpentUSD            string          `json:"spent_usd"`
	MaxSessions         int             `json:"max_sessions"`
	Sessions            int             `json:"sessions"`
	Holds               int             `json:"holds,omitempty"`
	Jobs                int             `json:"jobs"`
	CriticalPathSeconds int64           `json:"critical_path_seconds"`
	EstimateSeconds     int64           `json:"estimate_seconds"`
	SessionsFrom        string          `json:"sessions_from"`
	JobsFrom            string          `json:"jobs_from"`
	Agents              jsonConcurrency `json:"agents"`
	Commands            jsonConcurrency `json:"commands"`
}

// jsonConcurrency is planner.Concurrency: how many pending lots of a kind
// may run at once before the cap, and each repository's share.
type jsonConcurrency struct {
	Pending int                   `json:"pending"`
	Allowed int                   `json:"allowed"`
	Repos   []jsonRepoConcurrency `json:"repos"`
}

type jsonRepoConcurrency struct {
	Name     string `json:"name"`
	Parallel int    `json:"parallel"`
	Pending  int    `json:"pending"`
}

func concurrencyJSON(c planner.Concurrency) jsonConcurrency {
	out := jsonConcurrency{Pending: c.Pending, Allowed: c.Allowed, Repos: []jsonRepoConcurrency{}}
	for _, r := range c.Repos {
		out.Repos = append(out.Repos, jsonRepoConcurrency{Name: r.Name, Parallel: r.Parallel, Pending: r.Pending})
	}
	return out
}

func concurrencyPlan(c jsonConcurrency) planner.Concurrency {
	out := planner.Concurrency{Pending: c.Pending, Allowed: c.Allowed}
	for _, r := range c.Repos {
		out.Repos = append(out.Repos, planner.RepoConcurrency{Name: r.Name, Parallel: r.Parallel, Pending: r.Pending})
	}
	return out
}

type jsonWarning struct {
	Kind    string   `json:"kind"`
	Subject string   `json:"subject"`
	Message string   `json:"message"`
	Refuses bool     `json:"refuses"`
	Files   []string `json:"files"`
	LotIDs  []string `json:"lot_ids"`
}

type jsonAgent struct {
	Command string `json:"command"`
	Path    string `json:"path"`
	Version string `json:"version"`
	Error   string `json:"error"`
}

// JSON writes the plan as indented, versioned JSON (plan -json) that
// validates against schemas/plan.schema.json.
func JSON(w io.Writer, p *planner.Plan) error {
	return writeIndented(w, toJSON(p))
}

// writeIndented writes v as indented JSON, HTML characters unescaped.
func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func toJSON(p *planner.Plan) *jsonPlan {
	out := &jsonPlan{
		FormatVersion: p.FormatVersion,
		Wave:          p.Wave,
		File:          p.File,
		Offline:       p.Offline,
		WaveDigest:    p.WaveDigest,
		StateDigest:   p.StateDigest,
		Targets:       list(p.Targets),
		Replace:       list(p.Replace),
		Lots:          make([]jsonLot, len(p.Lots)),
		Repos:         make([]jsonRepo, len(p.Repos)),
		Warnings:      make([]jsonWarning, len(p.Warnings)),
		APIFailure:    p.APIFailure,
		Executor:      executorJSON(p.Executor),
	}
	for i := range p.Lots {
		lp := &p.Lots[i]
		l := jsonLot{
			ID: lp.ID, Title: lp.Title, Kind: lp.Kind.String(), Action: string(lp.Action),
			Reason: lp.Reason, HeldStatus: string(lp.HeldStatus), BlockedBy: list(lp.BlockedBy), Repo: lp.Repo, Branch: lp.Branch, Also: list(lp.Also),
			DependsOn: list(lp.DependsOn), Steps: make([]jsonStep, len(lp.Steps)), FallbackModel: lp.FallbackModel,
			BudgetTokens: int64(lp.Budget), SpentTokens: lp.Spent,
			EstimateSeconds: seconds(lp.Estimate), EstimateSet: lp.EstimateSet,
			TimeoutSeconds: seconds(lp.Timeout), ReviewTimeoutSeconds: seconds(lp.ReviewTimeout),
			RemainingSeconds: seconds(lp.Remaining),
			Env:              list(lp.Env), PathPrepend: list(lp.PathPrepend),
		}
		if lp.ResumeAt != nil {
			l.ResumeAt = &jsonResume{Step: string(lp.ResumeAt.Step), Pass: lp.ResumeAt.Pass}
		}
		for _, b := range lp.Bootstrap {
			l.Bootstrap = append(l.Bootstrap, jsonBootstrap{Repo: b.Repo, Submodules: b.Submodules, Copy: list(b.Copy), Setup: b.Setup})
		}
		for j, s := range lp.Steps {
			l.Steps[j] = jsonStep{Kind: string(s.Kind), Model: s.Model, Agent: s.Agent, AgentKind: s.AgentKind, FallbackModel: s.Fallback, Max: s.Max}
		}
		out.Lots[i] = l
	}
	for i, r := range p.Repos {
		out.Repos[i] = jsonRepo{Name: r.Name, Path: repoPath(p, r.Path), Base: r.Base, BaseSHA: r.BaseSHA,
			Test: r.Test, ProbableTest: r.ProbableTest, Parallel: r.Parallel, Lots: r.Lots, TestTimeoutSeconds: seconds(r.TestTimeout),
			Pushes: string(r.Pushes), PushesReason: r.PushesReason,
			Toolchain: r.Toolchain, ToolchainPath: list(r.ToolchainPath),
			ToolchainEnv: list(envNames(r.ToolchainEnv)), ToolchainErr: r.ToolchainErr}
	}
	t := p.Totals
	out.Totals = jsonTotals{
		Lots: t.Lots, ByAction: map[string]int{}, Outside: t.Outside,
		PendingAgent: t.PendingAgent, PendingCommand: t.PendingCommand,
		CeilingTokens: int64(t.Ceiling), Unbounded: t.Unbounded,
		BudgetTokens: int64(t.Budget), BudgetUSD: dollars(t.BudgetUSD),
		SpentTokens: t.Spent, SpentUSD: dollars(spec.USD(t.SpentMicro)),
		MaxSessions: t.MaxSessions, Sessions: t.Sessions, Holds: t.Holds, Jobs: t.Jobs,
		CriticalPathSeconds: seconds(t.CriticalPath), EstimateSeconds: seconds(t.Estimate),
		SessionsFrom: string(t.SessionsFrom), JobsFrom: string(t.JobsFrom),
		Agents: concurrencyJSON(t.Agents), Commands: concurrencyJSON(t.Commands),
	}
	for _, a := range planner.Actions {
		out.Totals.ByAction[string(a)] = t.ByAction[a]
	}
	for i, wn := range p.Warnings {
		out.Warnings[i] = jsonWarning{Kind: string(wn.Kind), Subject: wn.Subject, Message: wn.Message,
			Refuses: wn.Refuses, Files: list(wn.Files), LotIDs: list(wn.LotIDs)}
	}
	if a := p.Agent; a.Command != "" || a.Path != "" || a.Version != "" || a.Err != nil {
		out.Agent = &jsonAgent{Command: a.Command, Path: a.Path, Version: a.Version}
		if a.Err != nil {
			out.Agent.Error = a.Err.Error()
		}
	}
	if pv := p.Pinned; pv != nil {
		out.Pinned = &jsonPinned{CadenceVersion: pv.Cadence, AgentVersion: pv.Agent}
	}
	return out
}

// dollars renders an amount as an exact decimal string without "$": "40.00".
func dollars(u spec.USD) string { return strings.TrimPrefix(u.String(), "$") }

// list turns nil into an empty list, so that JSON shows [] and not null.
func list(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// envNames are the names of env, sorted; nil for none.
func envNames(env map[string]string) []string {
	var names []string
	for n := range env {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
