package planner

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// agents decode the agents' settings as the CLI does (the planner asks
// them whether they bypass the sandbox).
var agents = agent.NewRegistry(claude.New())

func mustLoad(t *testing.T, src string) *spec.Config {
	t.Helper()
	cfg, diags := spec.NewLoader().LoadBytes([]byte(src), filepath.Join(t.TempDir(), "wave.hcl"), spec.Options{AgentSettings: agents.DecodeSettings})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return cfg
}

const chain = `wave "w" {
  budget = "1M"
  max_sessions = 2
}
repo "api" {
  path = "."
  test = "go test ./..."
  parallel = 2
}
lot "a" {
  repo = repo.api
  brief = "a"
  budget = "100k"
}
lot "b" {
  repo = repo.api
  brief = "b"
  depends_on = [lot.a]
  budget = "200k"
}
lot "c" {
  repo = repo.api
  brief = "c"
  depends_on = [lot.b]
}
lot "d" {
  run = "true"
}
lot "e" {
  run = "true"
  depends_on = [lot.d]
}
`

func byID(p *Plan) map[string]LotPlan {
	m := map[string]LotPlan{}
	for _, l := range p.Lots {
		m[l.ID] = l
	}
	return m
}

func build(t *testing.T, cfg *spec.Config, st *state.State, m Machine, o Options) (*Plan, hcl.Diagnostics) {
	t.Helper()
	if o.Jobs == 0 {
		o.Jobs = 2
	}
	return Build(Input{Config: cfg, State: st, Machine: m, Options: o})
}

func TestFreshPlan(t *testing.T) {
	p, diags := build(t, mustLoad(t, chain), nil, nil, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	lots := byID(p)
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if lots[id].Action != ActionRun {
			t.Errorf("%s: %s", id, lots[id].Action)
		}
	}
	if got := lots["a"].Steps; len(got) != 3 || got[0].Kind != state.StepImplement || got[0].Model != "sonnet" || got[1].Model != "opus" || got[2].Max != 2 {
		t.Errorf("steps = %+v", got)
	}
	tot := p.Totals
	if tot.PendingAgent != 3 || tot.PendingCommand != 2 || tot.Ceiling != 300_000 || tot.Unbounded != 1 || tot.Sessions != 2 {
		t.Errorf("totals = %+v", tot)
	}
	// a→b→c is 3h; d→e 2m; at 2 sessions the chain is the makespan.
	if tot.CriticalPath != 3*time.Hour || tot.Estimate != 3*time.Hour {
		t.Errorf("critical %v estimate %v", tot.CriticalPath, tot.Estimate)
	}
	if lots["a"].Remaining != 3*time.Hour || lots["c"].Remaining != time.Hour {
		t.Errorf("remaining a=%v c=%v", lots["a"].Remaining, lots["c"].Remaining)
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Kind != WarnOffline {
		t.Errorf("warnings = %+v", p.Warnings)
	}
}

func TestActionsFromState(t *testing.T) {
	no := false
	now := time.Now()
	st := &state.State{Lots: map[string]*state.Lot{
		"a": {Status: state.LotDone},
		"b": {Status: state.LotRunning, Steps: []state.Step{
			{Kind: state.StepImplement, Status: state.StepOK, Started: now},
			{Kind: state.StepTest, Status: state.StepOK, Started: now},
			{Kind: state.StepReview, Status: state.StepOK, Conform: &no, Started: now},
		}},
		"d":    {Status: state.LotHandedBack, Cause: "tree left dirty"},
		"gone": {Status: state.LotDone},
	}}
	p, diags := build(t, mustLoad(t, chain), st, nil, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	lots := byID(p)
	if lots["a"].Action != ActionDone || lots["d"].Action != ActionHeld || !strings.Contains(lots["d"].Reason, "tree left dirty") {
		t.Errorf("a=%+v d=%+v", lots["a"], lots["d"])
	}
	if r := lots["b"].ResumeAt; lots["b"].Action != ActionResume || r == nil || r.Step != state.StepFix || r.Pass != 1 {
		t.Errorf("b = %+v resume %+v", lots["b"], r)
	}
	if lots["e"].Action != ActionBlocked || lots["e"].BlockedBy[0] != "d" || lots["e"].Reason != "d handed-back" {
		t.Errorf("e = %+v", lots["e"])
	}
	if lots["c"].Action != ActionRun {
		t.Errorf("c = %+v", lots["c"])
	}
	var stale bool
	for _, w := range p.Warnings {
		stale = stale || (w.Kind == WarnStaleState && w.LotIDs[0] == "gone")
	}
	if !stale {
		t.Errorf("no stale-state warning: %+v", p.Warnings)
	}
	// -replace d unblocks e.
	p, _ = build(t, mustLoad(t, chain), st, nil, Options{Replace: []string{"d"}})
	if lots := byID(p); lots["d"].Action != ActionReplace || lots["e"].Action != ActionRun {
		t.Errorf("after replace: d=%s e=%s", lots["d"].Action, lots["e"].Action)
	}
}

func TestQuestionAndInterrupted(t *testing.T) {
	st := &state.State{Lots: map[string]*state.Lot{
		"a": {Status: state.LotQuestion, Questions: []state.Question{{Step: 0, Text: "Which store?"}}},
		"d": {Status: state.LotRunning, Steps: []state.Step{{Kind: state.StepRun, Status: state.StepInterrupted}}},
	}}
	p, _ := build(t, mustLoad(t, chain), st, nil, Options{})
	lots := byID(p)
	if lots["a"].Action != ActionAnswer || lots["a"].Reason != "Which store?" {
		t.Errorf("a = %+v", lots["a"])
	}
	if lots["d"].Action != ActionResume || lots["d"].ResumeAt.Step != state.StepRun {
		t.Errorf("d = %+v", lots["d"])
	}
	st.Lots["a"].Questions[0].Answer = "Redis"
	st.Lots["a"].Steps = []state.Step{{Kind: state.StepImplement, Status: state.StepOK}}
	p, _ = build(t, mustLoad(t, chain), st, nil, Options{})
	if a := byID(p)["a"]; a.Action != ActionResume {
		t.Errorf("answered a = %+v", a)
	}
}

func TestTargetAndUnknownIDs(t *testing.T) {
	p, diags := build(t, mustLoad(t, chain), nil, nil, Options{Targets: []string{"b"}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(p.Lots) != 2 || p.Lots[0].ID != "a" || p.Lots[1].ID != "b" || p.Totals.Outside != 3 {
		t.Errorf("lots %+v outside %d", p.Lots, p.Totals.Outside)
	}
	_, diags = build(t, mustLoad(t, chain), nil, nil, Options{Targets: []string{"bb"}, Replace: []string{"zz"}})
	if len(diags) != 2 || !strings.Contains(diags[0].Detail, `Did you mean "b"?`) || diags[1].Summary != "Unknown lot in -replace" {
		t.Errorf("diags = %v", diags)
	}
}

type fakeMachine struct {
	repo  RepoFacts
	agent AgentFacts
}

func (f fakeMachine) Repo(*spec.Repo) RepoFacts { return f.repo }
func (f fakeMachine) Agent(*spec.Agent) AgentFacts {
	a := f.agent
	a.VersionArgs, a.MinVersion = "--version", "2.1.0" // what the claude adapter requires
	return a
}

func TestPreflight(t *testing.T) {
	good := RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}
	agent := AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328 (Claude Code)"}
	for _, tc := range []struct {
		name    string
		m       fakeMachine
		summary string      // error diagnostic expected
		warn    WarningKind // warning expected
		refuses bool
	}{
		{"ok", fakeMachine{good, agent}, "", "", false},
		{"missing", fakeMachine{RepoFacts{}, agent}, "Repository not found", "", false},
		{"not git", fakeMachine{RepoFacts{Exists: true}, agent}, "Not a git repository", "", false},
		{"no base", fakeMachine{RepoFacts{Exists: true, IsGit: true}, agent}, "Base branch not found", "", false},
		{"held", fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "a", HeldBy: `wave "x" (pid 42)`}, agent}, "Repository held by another wave", "", false},
		{"hook", fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc", ForeignPrePush: "/r/.git/hooks/pre-push"}, agent}, "", "", false}, // chained, not refused
		{"broken", fakeMachine{RepoFacts{Err: errors.New("boom")}, agent}, "Cannot inspect repository", "", false},
		{"dirty", fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "a", Dirty: []string{"x.go"}}, agent}, "", WarnDirty, true},
		{"no agent", fakeMachine{good, AgentFacts{Command: "claude"}}, "", WarnAgentMissing, true},
		{"old agent", fakeMachine{good, AgentFacts{Command: "claude", Path: "/c", Version: "1.0.3"}}, "", WarnAgentOld, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, diags := build(t, mustLoad(t, chain), nil, tc.m, Options{})
			if tc.summary != "" {
				if len(diags) == 0 || diags[0].Summary != tc.summary || diags[0].Subject == nil || diags[0].Subject.Start.Line != 5 {
					t.Fatalf("diags = %v", diags)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			var found *Warning
			for i, w := range p.Warnings {
				if w.Kind == tc.warn {
					found = &p.Warnings[i]
				}
			}
			if tc.warn == "" {
				if len(p.Warnings) != 0 || p.Repos[0].BaseSHA != "abc" {
					t.Errorf("warnings %+v repos %+v", p.Warnings, p.Repos)
				}
				return
			}
			if found == nil || found.Refuses != tc.refuses || len(p.Refusals()) != map[bool]int{true: 1, false: 0}[tc.refuses] {
				t.Errorf("warnings = %+v", p.Warnings)
			}
		})
	}
}

func TestNoTestGateWarning(t *testing.T) {
	cfg := mustLoad(t, `wave "w" {}
repo "app" { path = "." }
lot "a" {
  repo = repo.app
  brief = "x"
}`)
	m := fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "a", ProbableTest: "go test ./..."}, AgentFacts{Path: "/c", Version: "2.1.328"}}
	p, _ := build(t, cfg, nil, m, Options{})
	if len(p.Warnings) != 1 || p.Warnings[0].Kind != WarnNoTestGate || !strings.Contains(p.Warnings[0].Message, `test = "go test ./..."`) {
		t.Errorf("warnings = %+v", p.Warnings)
	}
}

func TestBudgetWarnings(t *testing.T) {
	cfg := mustLoad(t, strings.Replace(chain, `lot "c" {`, "lot \"c\" {\n  budget = \"800k\"", 1))
	p, _ := build(t, cfg, nil, nil, Options{})
	if !hasWarning(p, WarnBudget, false) {
		t.Errorf("no over-ceiling warning: %+v", p.Warnings)
	}
	st := &state.State{Consumed: state.Consumed{Counted: 1_000_000}, Lots: map[string]*state.Lot{}}
	p, _ = build(t, cfg, st, nil, Options{})
	if !hasWarning(p, WarnBudget, true) {
		t.Errorf("no exhausted warning: %+v", p.Warnings)
	}
	p, _ = build(t, cfg, st, nil, Options{Budget: 3_000_000})
	if hasWarning(p, WarnBudget, true) || p.Totals.Budget != 3_000_000 {
		t.Errorf("-budget did not raise: %+v", p.Totals)
	}
}

func hasWarning(p *Plan, k WarningKind, refuses bool) bool {
	for _, w := range p.Warnings {
		if w.Kind == k && w.Refuses == refuses {
			return true
		}
	}
	return false
}

func TestOverlapWarning(t *testing.T) {
	cfg := mustLoad(t, `wave "w" {}
repo "api" {
  path = "."
  parallel = 2
}
lot "a" {
  repo = repo.api
  brief = "Change internal/auth/store.go to add X."
}
lot "b" {
  repo = repo.api
  brief = "Rename things in internal/auth/store.go."
}
lot "c" {
  repo = repo.api
  brief = "Also internal/auth/store.go, after b."
  depends_on = [lot.b]
}`)
	p, _ := build(t, cfg, nil, nil, Options{})
	var got []string
	for _, w := range p.Warnings {
		if w.Kind == WarnOverlap {
			got = append(got, strings.Join(w.LotIDs, "+"))
		}
	}
	if strings.Join(got, ",") != "a+b,a+c" {
		t.Errorf("overlaps = %v", got)
	}
}

func TestSimulateRespectsCaps(t *testing.T) {
	// Four independent 1h agent lots in one repo of parallel 2, cap 3: 2h.
	src := `wave "w" {
  max_sessions = 3
}
repo "api" {
  path = "."
  parallel = 2
}
`
	for _, id := range []string{"a", "b", "c", "d"} {
		src += "lot \"" + id + "\" {\n  repo = repo.api\n  brief = \"x\"\n}\n"
	}
	p, _ := build(t, mustLoad(t, src), nil, nil, Options{})
	if p.Totals.Estimate != 2*time.Hour || p.Totals.Sessions != 2 {
		t.Errorf("estimate %v sessions %d", p.Totals.Estimate, p.Totals.Sessions)
	}
	p, _ = build(t, mustLoad(t, src), nil, nil, Options{MaxSessions: 1})
	if p.Totals.Estimate != 4*time.Hour || p.Totals.Sessions != 1 {
		t.Errorf("cap 1: estimate %v sessions %d", p.Totals.Estimate, p.Totals.Sessions)
	}
}

func TestProbableTestCommand(t *testing.T) {
	for want, fsys := range map[string]fstest.MapFS{
		"go test ./...": {"go.mod": {}},
		"npm test":      {"package.json": {Data: []byte(`{"scripts":{"test":"jest"}}`)}},
		"pytest":        {"pyproject.toml": {Data: []byte("[tool.pytest.ini_options]\n")}},
		"cargo test":    {"Cargo.toml": {}},
		"mvn test":      {"pom.xml": {}},
		"make test":     {"Makefile": {Data: []byte("all:\n\techo\ntest: all\n\t./t\n")}},
		"":              {"package.json": {Data: []byte(`{}`)}, "Makefile": {Data: []byte("all:\n")}},
	} {
		if got := ProbableTestCommand(fsys); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	if !VersionAtLeast("2.1.328 (Claude Code)", "2.1.0") || VersionAtLeast("2.0.9", "2.1.0") || VersionAtLeast("garbage", "1.0.0") || !VersionAtLeast("3.0.0", "2.9.9") {
		t.Error("VersionAtLeast")
	}
}

func TestResumeRules(t *testing.T) {
	no := false
	st := &state.State{Lots: map[string]*state.Lot{
		// an answered question replays the step that asked it
		"a": {Status: state.LotQuestion, Steps: []state.Step{
			{Kind: state.StepImplement, Status: state.StepOK, Usage: state.Usage{Input: 60_000}},
		}, Questions: []state.Question{{Step: 0, Text: "Which?", Answer: "That one"}}},
		// fix passes exhausted (fix_passes = 2): handed back, not a third fix
		"c": {Status: state.LotRunning, Steps: []state.Step{
			{Kind: state.StepImplement, Status: state.StepOK},
			{Kind: state.StepReview, Status: state.StepOK, Conform: &no},
			{Kind: state.StepFix, Pass: 1, Status: state.StepOK},
			{Kind: state.StepReview, Pass: 1, Status: state.StepOK, Conform: &no},
			{Kind: state.StepFix, Pass: 2, Status: state.StepOK},
			{Kind: state.StepReview, Pass: 2, Status: state.StepOK, Conform: &no},
		}},
	}}
	p, _ := build(t, mustLoad(t, chain), st, nil, Options{})
	lots := byID(p)
	if lots["c"].Action != ActionHeld || !strings.Contains(lots["c"].Reason, "after 2 fix pass") {
		t.Errorf("c = %+v", lots["c"])
	}
	if r := lots["a"].ResumeAt; lots["a"].Action != ActionResume || r.Step != state.StepImplement {
		t.Errorf("a = %+v", lots["a"])
	}
	// a may still spend 100k-60k, b 200k; c is held.
	if p.Totals.Ceiling != 240_000 {
		t.Errorf("ceiling = %s", p.Totals.Ceiling)
	}
}

func TestResumeAfterIntegrationTest(t *testing.T) {
	yes := true
	st := &state.State{Lots: map[string]*state.Lot{
		"a": {Status: state.LotRunning, Steps: []state.Step{
			{Kind: state.StepImplement, Status: state.StepOK},
			{Kind: state.StepTest, Status: state.StepOK},
			{Kind: state.StepReview, Status: state.StepOK, Conform: &yes},
			{Kind: state.StepIntegrate, Status: state.StepInterrupted},
			{Kind: state.StepTest, Status: state.StepOK},
		}},
	}}
	p, _ := build(t, mustLoad(t, chain), st, nil, Options{})
	if r := byID(p)["a"].ResumeAt; r == nil || r.Step != state.StepIntegrate {
		t.Errorf("resume at %+v, want integrate", r)
	}
	// Killed during that test: integration goes on too.
	st.Lots["a"].Steps[4].Status = state.StepInterrupted
	p, _ = build(t, mustLoad(t, chain), st, nil, Options{})
	if r := byID(p)["a"].ResumeAt; r == nil || r.Step != state.StepIntegrate {
		t.Errorf("resume at %+v, want integrate", r)
	}
}

// TestConcurrency: the totals say how many lots of each kind the lots and
// their repositories' parallel allow at once, and where the caps come from.
func TestConcurrency(t *testing.T) {
	src := `wave "w" {}
repo "api" {
  path     = "."
  parallel = 4
}
repo "web" {
  path = "."
}
lot "a" {
  repo  = repo.api
  brief = "x"
}
lot "b" {
  repo  = repo.api
  brief = "x"
}
lot "c" {
  repo = repo.web
  run  = "true"
}
lot "d" {
  repo = repo.web
  run  = "true"
}
lot "e" {
  run = "true"
}
`
	cfg := mustLoad(t, src)
	p, diags := Build(Input{Config: cfg})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	tt := p.Totals
	wantAgents := Concurrency{Pending: 2, Allowed: 2, Repos: []RepoConcurrency{{Name: "api", Parallel: 4, Pending: 2}}}
	wantCommands := Concurrency{Pending: 3, Allowed: 2, Repos: []RepoConcurrency{{Name: "web", Parallel: 1, Pending: 2}}}
	if !reflect.DeepEqual(tt.Agents, wantAgents) || !reflect.DeepEqual(tt.Commands, wantCommands) {
		t.Errorf("agents %+v commands %+v, want %+v and %+v", tt.Agents, tt.Commands, wantAgents, wantCommands)
	}
	if tt.SessionsFrom != CapWave || tt.JobsFrom != CapCPUs || tt.Sessions != 2 {
		t.Errorf("defaults: sessions from %q, jobs from %q, sessions %d", tt.SessionsFrom, tt.JobsFrom, tt.Sessions)
	}
	p, _ = Build(Input{Config: cfg, Options: Options{MaxSessions: 1, MaxSessionsFrom: CapEnv, Jobs: 3}})
	if tt := p.Totals; tt.SessionsFrom != CapEnv || tt.JobsFrom != CapFlag || tt.Sessions != 1 || tt.Commands.At(tt.Jobs) != 2 {
		t.Errorf("options: sessions from %q (%d), jobs from %q, commands at once %d", tt.SessionsFrom, tt.Sessions, tt.JobsFrom, tt.Commands.At(tt.Jobs))
	}
	p, _ = Build(Input{Config: cfg, Options: Options{MaxSessions: 3}})
	if p.Totals.SessionsFrom != CapFlag {
		t.Errorf("-max-sessions: from %q", p.Totals.SessionsFrom)
	}
}

// TestSummaryWords checks that the plan's one-line summary says what needs
// the lead the way status and apply's end line do: "waiting for an answer",
// "handed back", "failed" (the JSON keeps the action values).
func TestSummaryWords(t *testing.T) {
	st := &state.State{Lots: map[string]*state.Lot{
		"a": {Status: state.LotQuestion, Steps: []state.Step{{Kind: state.StepImplement, Status: state.StepOK}},
			Questions: []state.Question{{Step: 0, Text: "Which store?"}}},
		"c": {Status: state.LotHandedBack, Cause: "rebase conflict"},
		"d": {Status: state.LotFailed, Cause: "exit status 1"},
	}}
	p, diags := build(t, mustLoad(t, chain), st, nil, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got, want := p.Summary(), "1 run, 1 waiting for an answer, 1 handed back, 1 failed, 1 blocked"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if p.Totals.ByAction[ActionHeld] != 2 || p.Totals.ByAction[ActionAnswer] != 1 {
		t.Errorf("by action = %v", p.Totals.ByAction)
	}
}
