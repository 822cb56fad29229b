package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/planner/render"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// planFlags are the flags plan and apply share.
type planFlags struct {
	*flagSet
	vars, varFiles, targets, replace listFlag
	budget, budgetUSD                string
	maxSessions, jobs                int
	offline                          bool
	// upgrade is apply's -upgrade: go on with another cadence than the
	// one that started the wave, and record it (and the agent CLI's
	// version) in the state.
	upgrade bool
	// graph is set for graph's flags (newGraphFlags): no caps are read,
	// CADENCE_MAX_SESSIONS included.
	graph bool
	// input is -input (default true): false, apply never asks and fails
	// where it would ask to confirm. lock is -lock (default true): false
	// is accepted and ignored with a note; the wave's lock is always taken.
	input, lock bool
	// executor is -executor: "local" runs every step on this machine
	// whatever the wave's executor block says; "" reads CADENCE_EXECUTOR.
	executor string
}

func newPlanFlags(e *env, name, args, summary string) *planFlags {
	f := &planFlags{flagSet: newFlags(e, name, args, summary)}
	f.varFlags(&f.vars, &f.varFiles)
	f.Var(&f.targets, "target", "plan only this lot and its dependencies (repeatable)")
	f.Var(&f.replace, "replace", "run this lot again even if it is done (repeatable)")
	f.StringVar(&f.budget, "budget", "", "raise the wave budget, e.g. 3M (counted tokens)")
	f.StringVar(&f.budgetUSD, "budget-usd", "", "raise the wave's dollar ceiling (budget_usd), e.g. 25 or 12.50")
	f.IntVar(&f.maxSessions, "max-sessions", 0, "agent sessions at once (default: CADENCE_MAX_SESSIONS, else the wave's max_sessions, else "+strconv.Itoa(spec.DefaultMaxSessions)+")")
	f.IntVar(&f.jobs, "jobs", 0, "command lots at once (default: the number of CPUs, "+strconv.Itoa(runtime.NumCPU())+" here)")
	f.BoolVar(&f.input, "input", true, "ask for input when needed; -input=false never asks: apply fails where it would ask to confirm")
	f.BoolVar(&f.lock, "lock", true, "Terraform's state lock switch, accepted for its CI habits: cadence always takes the wave's lock (-lock=false is ignored, with a note)")
	f.BoolVar(&e.compactWarnings, "compact-warnings", false, "sum up the warnings that do not refuse on one line (those that refuse are shown whole)")
	return f
}

// offlineFlag adds -offline (plan and graph; apply needs the machine, and
// refuses it with a hint: see planOnlyFlags).
func (f *planFlags) offlineFlag() {
	f.BoolVar(&f.offline, "offline", false, "skip machine checks (repositories, git, agent CLI): for CI runners")
}

// executorFlag adds -executor (plan and apply).
func (f *planFlags) executorFlag() {
	f.StringVar(&f.executor, "executor", "", "local: run every step on this machine, whatever the wave's executor block says (default: CADENCE_EXECUTOR, else the wave's)")
}

// localOnly reads -executor, else CADENCE_EXECUTOR: whether this run keeps
// every step on this machine (docs/remote.md, Wave file). A value other
// than "local" (or "" for the wave's block) is a diagnostic.
func (f *planFlags) localOnly(e *env) (bool, hcl.Diagnostics) {
	v, from := f.executor, "-executor"
	if v == "" {
		v, from = e.getenv("CADENCE_EXECUTOR"), "CADENCE_EXECUTOR"
	}
	switch v {
	case "", "wave":
		return false, nil
	case "local":
		return true, nil
	}
	return false, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid " + from,
		Detail: fmt.Sprintf("%s=%q: the one value is \"local\" (every step on this machine); without it, the wave's executor block decides.", from, v)}}
}

// options converts the flags, reporting bad values as diagnostics.
func (f *planFlags) options(e *env, waveDigest string) (planner.Options, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	o := planner.Options{Targets: f.targets, Replace: f.replace, MaxSessions: f.maxSessions, Jobs: f.jobs, WaveDigest: waveDigest,
		CadenceVersion: e.cadenceVersion(), Upgrade: f.upgrade}
	if f.budget != "" {
		t, err := spec.ParseTokens(f.budget)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -budget", Detail: err.Error()})
		}
		o.Budget = t
	}
	if f.budgetUSD != "" {
		u, err := spec.ParseUSD(f.budgetUSD)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -budget-usd", Detail: err.Error()})
		}
		o.BudgetUSD = u
	}
	if o.MaxSessions == 0 && !f.graph {
		if v := e.getenv("CADENCE_MAX_SESSIONS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid CADENCE_MAX_SESSIONS",
					Detail: fmt.Sprintf("CADENCE_MAX_SESSIONS=%q must be a whole number of at least 1.", v)})
			}
			o.MaxSessions, o.MaxSessionsFrom = n, planner.CapEnv
		}
	}
	if !f.graph {
		local, ldiags := f.localOnly(e)
		diags = append(diags, ldiags...)
		o.LocalOnly = local
	}
	if f.maxSessions < 0 || f.jobs < 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid flag", Detail: "-max-sessions and -jobs must be at least 1."})
	}
	return o, diags
}

// makePlan loads the wave and its state and builds the plan. It prints
// diagnostics itself and returns nil when there are errors.
func (f *planFlags) makePlan(e *env, file string, diagOut io.Writer) (*wave, *planner.Plan) {
	w, diags := e.loadWave(file, spec.Options{Vars: f.vars, VarFiles: f.varFiles})
	if !diags.HasErrors() {
		if err := w.readState(); err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unreadable state file", Detail: err.Error()})
		}
	}
	var p *planner.Plan
	if !diags.HasErrors() {
		opts, odiags := f.options(e, w.digest)
		diags = append(diags, odiags...)
		if !odiags.HasErrors() {
			in := planner.Input{Config: w.cfg, State: w.state, StateDigest: w.stateDigest, Options: opts}
			if !f.offline {
				in.Machine = e.machine(w.cfg.Wave.Name, file)
			}
			var pdiags hcl.Diagnostics
			p, pdiags = planner.Build(in)
			diags = append(diags, pdiags...)
			if !f.offline {
				diags = append(diags, e.freeSpaceDiags(w)...)
			}
		}
	}
	if diags.HasErrors() || !f.json {
		// With -json, a plan that succeeds is one JSON document: no other.
		e.writeDiags(diagOut, diags, w.loader.Files, f.json)
	}
	if diags.HasErrors() {
		return w, nil
	}
	return w, p
}

func runPlan(e *env, args []string) ExitCode {
	f := newPlanFlags(e, "plan", "[FILE|DIR...]", "Validate the wave, check the machine (repositories, git state, agent CLI) and show\nwhat apply would do, diffed against the state file. Several files, or a folder's\n*.hcl and *.hcl.json files, are planned one after the other; files that are not\nwave files (no top-level wave or lot block) are skipped with a note.")
	f.offlineFlag()
	f.executorFlag()
	format := f.String("format", "text", "output format: text, json, markdown, dot or mermaid")
	detailed := f.Bool("detailed-exitcode", false, "exit 0 when every lot is done, 2 when work is pending, 3 when nothing is pending but lots need the lead (and 1 for an error or a usage error)")
	out := f.String("out", "", "save the plan to PLANFILE for apply PLANFILE")
	// With -detailed-exitcode, 2 means work pending: a usage error is 1.
	usageErr := planUsageExit(append([]string{"plan"}, args...))
	pos, code := f.parse(e, args)
	if code == ExitUsage {
		return usageErr
	}
	if code >= 0 {
		return code
	}
	if f.json {
		if formatGiven(f.FlagSet) && *format != "json" {
			fmt.Fprintf(e.stderr, "cadence plan: -json and -format %s ask for two outputs: give one\n", *format)
			return usageErr
		}
		*format = "json"
	}
	rend := e.planRenderers()[*format]
	if rend == nil {
		fmt.Fprintf(e.stderr, "cadence plan: unknown -format %q (text, json, markdown, dot or mermaid)\n", *format)
		return usageErr
	}
	diagOut := e.stderr
	if *format == "json" {
		diagOut = e.stdout
	}
	if f.badValues(e, diagOut) {
		return usageErr
	}
	files, skips, code := planArgs(e, pos, *format, *out)
	if code == ExitUsage {
		return usageErr
	}
	if code >= 0 {
		return code
	}
	if len(files) > 1 || *format == "markdown" {
		return f.planMany(e, files, skips, *format, rend, *detailed, *out)
	}
	file := files[0]
	w, p := f.makePlan(e, file, diagOut)
	if p == nil {
		return ExitError
	}
	if err := rend(e.stdout, p); err != nil {
		fmt.Fprintf(e.stderr, "cadence plan: %v\n", err)
		return ExitError
	}
	if *out != "" {
		if err := f.save(*out, w, p); err != nil {
			fmt.Fprintf(e.stderr, "cadence plan: %v\n", err)
			return ExitError
		}
		if *format == "text" {
			fmt.Fprintf(e.stdout, "\nSaved the plan to %s: cadence apply %s runs exactly this plan.\n", *out, *out)
		}
	}
	if *detailed {
		return detailedCode(p)
	}
	return ExitOK
}

// detailedCode is plan -detailed-exitcode's exit code for the plan p:
// ExitPending when apply would work on a lot, else ExitNeedsLead when a
// lot of the plan needs the lead (held, refused, answer, blocked), else
// ExitOK (every lot done, or left out by -target).
func detailedCode(p *planner.Plan) ExitCode {
	if p.Totals.PendingAgent+p.Totals.PendingCommand > 0 {
		return ExitPending
	}
	for _, a := range []planner.Action{planner.ActionHeld, planner.ActionRefused, planner.ActionAnswer, planner.ActionBlocked} {
		if p.Totals.ByAction[a] > 0 {
			return ExitNeedsLead
		}
	}
	return ExitOK
}

// planUsageExit is the exit code of a usage error of the command line args
// (from the command on, or from a global flag on): ExitError when it runs
// plan with -detailed-exitcode, whose 2 means work pending (as Terraform:
// 1 is an error, 2 pending changes), else ExitUsage.
func planUsageExit(args []string) ExitCode {
	for i, a := range args {
		if a == "plan" {
			if detailedExitcode(args[i+1:]) {
				return ExitError
			}
			break
		}
	}
	return ExitUsage
}

// detailedExitcode reports whether plan's arguments args turn on
// -detailed-exitcode (one or two dashes; -detailed-exitcode=false does
// not, a value that is no boolean does), before any "--".
func detailedExitcode(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "detailed-exitcode" {
			continue
		}
		on = true
		if b, err := strconv.ParseBool(value); hasValue && err == nil {
			on = b
		}
	}
	return on
}

// save writes plan -out.
func (f *planFlags) save(path string, w *wave, p *planner.Plan) error {
	if err := refuseOverwrite(path); err != nil {
		return err
	}
	if _, err := planKey(); err != nil {
		return err
	}
	abs, err := filepath.Abs(w.file)
	if err != nil {
		return err
	}
	if err := sensitiveVarsUnsaved(f.vars, w.cfg.SensitiveVars); err != nil {
		return err
	}
	varFiles, err := absPaths(f.varFiles)
	if err != nil {
		return err
	}
	s := &planner.SavedPlan{
		FormatVersion: planner.FormatVersion, Kind: planner.SavedPlanKind,
		WaveFile: abs, WaveDigest: w.digest, StateDigest: w.stateDigest,
		BaseSHAs: map[string]string{}, Vars: f.vars, VarFiles: varFiles,
		Targets: f.targets, Replace: f.replace, MaxSessions: f.maxSessions, Jobs: f.jobs,
		Offline: f.offline, Created: time.Now().UTC().Truncate(time.Second), Summary: p.Summary(),
	}
	if f.budget != "" {
		t, _ := spec.ParseTokens(f.budget)
		s.Budget = int64(t)
	}
	if f.budgetUSD != "" {
		u, _ := spec.ParseUSD(f.budgetUSD)
		s.BudgetUSD = int64(u)
	}
	for _, r := range p.Repos {
		if r.BaseSHA != "" {
			s.BaseSHAs[r.Name] = r.BaseSHA
		}
	}
	recordInputs(s, w)
	s.ToolchainFiles, s.Toolchains = toolchainInputs(w, p)
	var js bytes.Buffer
	if err := render.JSON(&js, p); err != nil {
		return err
	}
	s.Plan = js.Bytes()
	return planner.WriteSaved(path, s)
}

// sensitiveVarsUnsaved refuses to save a plan that would hold the value of
// a variable declared sensitive = true in clear (a -var assignment is saved
// as written); a var file is saved by path and read again by apply.
func sensitiveVarsUnsaved(vars []string, sensitive map[string]bool) error {
	for _, kv := range vars {
		if name, _, _ := strings.Cut(kv, "="); sensitive[name] {
			return fmt.Errorf("variable %q is sensitive: a saved plan does not hold its value, so give it in a -var-file instead of -var", name)
		}
	}
	return nil
}

// newGraphFlags are graph's flags: only those that change the graph it
// prints (-var and -var-file, which the wave may need to load; -target and
// -replace, which choose the lots and their colours; -format). The budget,
// session and job caps and -offline mean nothing for a graph, which is
// always planned offline: they are unknown flags, a usage error. (-json
// and the common flags come from newFlags.)
func newGraphFlags(e *env) *planFlags {
	f := &planFlags{flagSet: newFlags(e, "graph", "[FILE]", "Print the dependency graph of the lots, coloured by what apply would do.\nDOT by default (Graphviz); -format mermaid renders on GitHub."), graph: true}
	f.varFlags(&f.vars, &f.varFiles)
	f.Var(&f.targets, "target", "graph only this lot and its dependencies (repeatable)")
	f.Var(&f.replace, "replace", "colour this lot as run again even if it is done (repeatable)")
	f.offline = true // the graph needs no machine facts
	return f
}

func runGraph(e *env, args []string) ExitCode {
	f := newGraphFlags(e)
	format := f.String("format", "dot", "dot, mermaid or json (the same as -json: nodes and edges)")
	pos, code := f.parse(e, args)
	if code >= 0 {
		return code
	}
	file, ok := oneFile(e, "graph", pos)
	if !ok {
		return ExitUsage
	}
	diagOut := e.stderr
	if f.json {
		// nodes and edges (render.GraphJSON); diagnostics as JSON too
		*format, diagOut = "json", e.stdout
	}
	rend := map[string]func(io.Writer, *planner.Plan) error{"dot": render.DOT, "mermaid": render.Mermaid, "json": render.GraphJSON}[*format]
	if rend == nil {
		fmt.Fprintf(e.stderr, "cadence graph: unknown -format %q (dot, mermaid or json)\n", *format)
		return ExitUsage
	}
	if f.badValues(e, diagOut) {
		return ExitUsage
	}
	_, p := f.makePlan(e, file, diagOut)
	if p == nil {
		return ExitError
	}
	if err := rend(e.stdout, p); err != nil {
		fmt.Fprintf(e.stderr, "cadence graph: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// planRenderers are a plan's renderers by -format name: text (coloured on
// a terminal), json, markdown, dot and mermaid (plan; show takes the first
// three).
func (e *env) planRenderers() map[string]func(io.Writer, *planner.Plan) error {
	return map[string]func(io.Writer, *planner.Plan) error{
		"json":     render.JSON,
		"markdown": render.Markdown,
		"dot":      render.DOT,
		"mermaid":  render.Mermaid,
		"text": func(w io.Writer, p *planner.Plan) error {
			return render.Text(w, p, render.Options{Color: e.colorOn(w), CompactWarnings: e.compactWarnings})
		},
	}
}

// formatGiven reports whether -format was given on the command line.
func formatGiven(fs *flag.FlagSet) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "format" })
	return given
}
