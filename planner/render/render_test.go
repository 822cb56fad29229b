package render

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"github.com/cadence-run/cadence/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// load decodes a wave file and fails the test on any error.
func load(t testing.TB, path string) *spec.Config {
	t.Helper()
	cfg, diags := spec.NewLoader().LoadFile(path, spec.Options{})
	if diags.HasErrors() {
		t.Fatalf("load %s: %s", path, diags.Error())
	}
	return cfg
}

// build makes a plan and fails the test on any error.
func build(t testing.TB, in planner.Input) *planner.Plan {
	t.Helper()
	if in.Options.Jobs == 0 {
		in.Options.Jobs = 2
	}
	p, diags := planner.Build(in)
	if diags.HasErrors() {
		t.Fatalf("plan: %s", diags.Error())
	}
	return p
}

// fakeMachine answers preflight without repositories or an agent CLI.
type fakeMachine struct{}

func (fakeMachine) Repo(r *spec.Repo) planner.RepoFacts {
	f := planner.RepoFacts{Exists: true, IsGit: true, BaseSHA: "0123456789abcdef0123456789abcdef01234567"}
	switch r.Name {
	case "api":
		for i := range 13 {
			f.Dirty = append(f.Dirty, fmt.Sprintf("internal/auth/file%02d.go", i))
		}
	case "web":
		f.ProbableTest = "npm test"
	}
	return f
}

func (fakeMachine) Agent(a *spec.Agent) planner.AgentFacts {
	// What the claude adapter requires (both agents are of kind claude).
	need := planner.AgentFacts{VersionArgs: "--version", MinVersion: "2.1.0",
		Install: "install Claude Code: npm install -g @anthropic-ai/claude-code, or set CADENCE_CLAUDE_BIN"}
	if a.Name == "codex" {
		need.Command, need.Path, need.Version = "codex", "/usr/local/bin/codex", "codex 0.9.0"
		need.SandboxMissing = "socat not found"
		return need
	}
	need.Command = a.Command
	return need
}

// remoteMachine is fakeMachine with an engine that answers with two live
// workers and a pool of 4 slots, one in flight.
type remoteMachine struct{ fakeMachine }

func (remoteMachine) Remote(*spec.Executor) (planner.RemoteFacts, error) {
	return planner.RemoteFacts{
		Workers: []planner.RemoteWorker{
			{ID: "build-1", Agents: map[string]string{"claude": "2.1.328 (Claude Code)"}, Toolchains: []string{"go@1.26", "node@22"}, Slots: 2, Free: 1},
			{ID: "build-2", Agents: map[string]string{"claude": "2.1.328 (Claude Code)", "codex": "codex-cli 0.9.0"}, Slots: 2, Free: 2},
		},
		Pool: planner.RemotePool{Cap: 4, InFlight: 1, Free: 3},
	}, nil
}

// actionsState is a hand-made state file for testdata/actions/wave.hcl that
// gives every action: base done, resumer at fix pass 2, asker waiting for an
// answer, held handed back (after and later blocked by it), again done and
// replaced, plus a lot the wave no longer declares.
func actionsState() *state.State {
	no := false
	usage := func(n int64) state.Usage {
		return state.Usage{Input: n / 2, CacheWrite: n / 4, CacheRead: n, Output: n / 4}
	}
	return &state.State{
		CadenceVersion: "v1.0.0", AgentVersion: "2.1.328 (Claude Code)",
		FormatVersion: state.FormatVersion,
		Wave:          "actions",
		WaveDigest:    "sha256:old",
		Status:        state.WaveSuspendedBudget,
		Consumed:      state.Consumed{Counted: 1_000_000, CacheRead: 2_000_000, CostMicros: 12_345_000},
		Lots: map[string]*state.Lot{
			"base": {Status: state.LotDone, Steps: []state.Step{
				{Kind: state.StepImplement, Status: state.StepOK, Usage: usage(120_000)},
				{Kind: state.StepReview, Status: state.StepOK, Usage: usage(40_000)},
			}},
			"resumer": {Status: state.LotSuspended, Steps: []state.Step{
				{Kind: state.StepImplement, Status: state.StepOK, Usage: usage(100_000)},
				{Kind: state.StepTest, Status: state.StepOK},
				{Kind: state.StepReview, Status: state.StepOK, Conform: &no, Usage: usage(30_000)},
				{Kind: state.StepFix, Pass: 1, Status: state.StepOK, Usage: usage(60_000)},
				{Kind: state.StepTest, Pass: 1, Status: state.StepOK},
				{Kind: state.StepReview, Pass: 1, Status: state.StepOK, Conform: &no, Usage: usage(30_000)},
			}},
			"asker": {Status: state.LotQuestion, Steps: []state.Step{
				{Kind: state.StepImplement, Status: state.StepOK, Usage: usage(20_000)},
			}, Questions: []state.Question{{Step: 0, Text: "Keep the old <form>\nor | replace it & redirect?"}}},
			"held": {Status: state.LotHandedBack, Cause: "rebase conflict in go.sum", Steps: []state.Step{
				{Kind: state.StepImplement, Status: state.StepOK, Usage: usage(80_000)},
			}},
			"again": {Status: state.LotDone},
			"gone":  {Status: state.LotDone},
		},
	}
}

// testCase is one plan rendered to goldens in every format.
type testCase struct {
	name string
	plan func(t testing.TB) *planner.Plan
}

func exampleCase(name, path string, opts planner.Options) testCase {
	return testCase{name, func(t testing.TB) *planner.Plan {
		opts.Jobs = 2
		return build(t, planner.Input{Config: load(t, path), Options: opts})
	}}
}

var cases = []testCase{
	exampleCase("quickstart", "../../examples/quickstart/wave.hcl", planner.Options{}),
	exampleCase("multi-repo", "../../examples/multi-repo/wave.hcl", planner.Options{}),
	exampleCase("json-syntax", "../../examples/json-syntax/wave.hcl.json", planner.Options{}),
	exampleCase("ci", "../../examples/ci/wave.hcl", planner.Options{}),
	exampleCase("target", "../../examples/multi-repo/wave.hcl", planner.Options{Targets: []string{"login"}}),
	{"actions", func(t testing.TB) *planner.Plan {
		return build(t, planner.Input{
			Config:      load(t, "testdata/actions/wave.hcl"),
			State:       actionsState(),
			StateDigest: "sha256:state",
			Machine:     fakeMachine{},
			Options:     planner.Options{Jobs: 2, Replace: []string{"again"}, WaveDigest: "sha256:new", CadenceVersion: "v1.0.0"},
		})
	}},
	{"guards", func(t testing.TB) *planner.Plan {
		return build(t, planner.Input{Config: load(t, "testdata/guards/wave.hcl"), Machine: fakeMachine{}, Options: planner.Options{Jobs: 2}})
	}},
	{"agents", func(t testing.TB) *planner.Plan {
		cfg, diags := spec.NewLoader().LoadFile("testdata/agents/wave.hcl", spec.Options{AgentKinds: []string{spec.AgentKindClaude, "codex"}})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		return build(t, planner.Input{Config: cfg, Machine: fakeMachine{}, Options: planner.Options{Jobs: 2}})
	}},
	{"remote", func(t testing.TB) *planner.Plan {
		return build(t, planner.Input{Config: load(t, "testdata/remote/wave.hcl"), Machine: remoteMachine{}, Options: planner.Options{Jobs: 2}})
	}},
	{"escapes", func(t testing.TB) *planner.Plan {
		return build(t, planner.Input{Config: load(t, "testdata/escapes/wave.hcl"), Machine: fakeMachine{}, Options: planner.Options{Jobs: 2}})
	}},
}

// formats are the renderers, by golden file suffix.
var formats = []struct {
	ext    string
	render func(io.Writer, *planner.Plan) error
}{
	{"txt", func(w io.Writer, p *planner.Plan) error { return Text(w, p, Options{}) }},
	{"color.txt", func(w io.Writer, p *planner.Plan) error { return Text(w, p, Options{Color: true}) }},
	{"json", JSON},
	{"md", Markdown},
	{"dot", DOT},
	{"mmd", Mermaid},
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %q\nwant: %q\n(run go test -update if the change is intended)", path, i+1, g, w)
			}
		}
	}
}

func TestGolden(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.plan(t)
			for _, f := range formats {
				var a, b bytes.Buffer
				if err := f.render(&a, p); err != nil {
					t.Fatalf("%s: %v", f.ext, err)
				}
				if err := f.render(&b, p); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Fatalf("%s: two renderings differ (err %v)", f.ext, err)
				}
				golden(t, c.name+"."+f.ext+".golden", a.Bytes())
			}
		})
	}
}

func TestJSONValidates(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := JSON(&buf, c.plan(t)); err != nil {
				t.Fatal(err)
			}
			if err := schemacheck.Validate("plan.schema.json", buf.Bytes()); err != nil {
				t.Fatalf("plan JSON does not validate: %v\n%s", err, buf.String())
			}
		})
	}
}

// TestSchemaRejects makes sure the validation above can fail: broken
// documents are refused.
func TestSchemaRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := JSON(&buf, cases[5].plan(t)); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if err := schemacheck.Validate("plan.schema.json", []byte(good)); err != nil {
		t.Fatalf("the unbroken document must validate: %v", err)
	}
	breaks := map[string][2]string{
		"unknown action":   {`"action": "run"`, `"action": "explode"`},
		"extra key":        {`"offline": false,`, `"offline": false, "extra": 1,`},
		"missing key":      {`"wave_digest": "sha256:new",`, ``},
		"tokens as string": {`"budget_tokens": 1000000,`, `"budget_tokens": "1M",`},
		"usd with dollar":  {`"budget_usd": "25.50"`, `"budget_usd": "$25.50"`},
		"warning kind":     {`"kind": "stale-state"`, `"kind": "stale"`},
		"version":          {`"format_version": 1`, `"format_version": 99`},
		"resume pass":      {`"pass": 2`, `"pass": -2`},
		"pushes":           {`"pushes": "detected"`, `"pushes": "maybe"`},
		"no pushes reason": {"\"pushes\": \"prevented\",\n      \"pushes_reason\": \"\"", `"pushes": "prevented"`},
	}
	for name, br := range breaks {
		if !strings.Contains(good, br[0]) {
			t.Fatalf("%s: %q not in the document", name, br[0])
		}
		bad := strings.Replace(good, br[0], br[1], 1)
		if err := schemacheck.Validate("plan.schema.json", []byte(bad)); err == nil {
			t.Errorf("%s: the schema accepted a broken document", name)
		}
	}
}

// TestActions checks that the hand-made state gives the plan it is meant to.
func TestActions(t *testing.T) {
	p := cases[5].plan(t)
	want := map[string]planner.Action{
		"base": planner.ActionDone, "resumer": planner.ActionResume, "asker": planner.ActionAnswer,
		"held": planner.ActionHeld, "after": planner.ActionBlocked, "later": planner.ActionBlocked,
		"again": planner.ActionReplace, "fresh": planner.ActionRun, "gen": planner.ActionRun,
	}
	for _, lp := range p.Lots {
		if a, ok := want[lp.ID]; ok && lp.Action != a {
			t.Errorf("lot %s: action %s, want %s", lp.ID, lp.Action, a)
		}
	}
	kinds := map[planner.WarningKind]bool{}
	for _, w := range p.Warnings {
		kinds[w.Kind] = true
	}
	for _, k := range []planner.WarningKind{planner.WarnNoTestGate, planner.WarnDirty, planner.WarnAgentMissing,
		planner.WarnAgentOld, planner.WarnOverlap, planner.WarnBudget, planner.WarnWaveChanged, planner.WarnStaleState,
		planner.WarnNoSandbox} {
		if !kinds[k] {
			t.Errorf("no %s warning", k)
		}
	}
	var text bytes.Buffer
	if err := Text(&text, p, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"resume at fix (pass 2)", "waiting for an answer: Keep the old <form> or", "blocked: held handed-back",
		"Lots:      3 run, 1 resume, 1 replace, 1 waiting for an answer, 1 handed back, 2 blocked, 1 done", "apply refuses", "… and 3 more files", "implement (sonnet) → review (opus) → fix ≤2"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text output lacks %q", s)
		}
	}
	if strings.Contains(text.String(), "\x1b[") {
		t.Error("text without colour has escape codes")
	}
	var md bytes.Buffer
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Login page \\| &lt;form&gt; &amp; redirect", "Keep the old &lt;form&gt; or \\| replace",
		"**3 run, 1 resume, 1 replace, 1 waiting for an answer, 1 handed back, 2 blocked, 1 done**",
		"| `!` handed back | <code>held</code>", "| `?` waiting for an answer | <code>asker</code>",
		"`?` waiting for an answer · `!` handed back / failed · "} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
}

func TestStepsLabel(t *testing.T) {
	steps := []planner.Step{
		{Kind: state.StepPrecheck, Model: "opus"}, {Kind: state.StepImplement, Model: "sonnet"},
		{Kind: state.StepReview, Model: "opus"}, {Kind: state.StepFix, Model: "sonnet", Max: 2},
	}
	if got, want := stepsLabel(steps, ""), "precheck (opus) → implement (sonnet) → review (opus) → fix ≤2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	steps[3].Model = "haiku"
	if got, want := stepsLabel(steps[1:], ""), "implement (sonnet) → review (opus) → fix (haiku) ≤2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// a sensitive model is "(sensitive)", not "((sensitive))"
	steps[1].Model, steps[2].Model, steps[3].Model = spec.Redacted, spec.Redacted, spec.Redacted
	if got, want := stepsLabel(steps[1:], ""), "implement (sensitive) → review (sensitive) → fix ≤2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEscapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a|b <c> & d\r\ne~", `a\|b &lt;c&gt; &amp; d e\~`},
		// mentions and issue references notify no one
		{"ask @alice and @org/team", "ask @&#8203;alice and @&#8203;org/team"},
		{"fixes #123, owner/repo#7; not # 1 or #x", "fixes #&#8203;123, owner/repo#&#8203;7; not # 1 or #x"},
		// control characters are shown, white space folded
		{"bell\a esc\x1b[31m del\x7f tab\tnul\x00", "bell␇ esc␛\\[31m del␡ tab nul␀"},
		// C1 controls and bidirectional overrides are replaced
		{"abc\u202edcba\u0085x\u2066", "abc\ufffddcba\ufffdx\ufffd"},
		// code spans, links and autolinks cannot be opened
		{"[click](https://example.com) `x`", `\[click\](https:&#8203;//example.com) \` + "`" + `x\` + "`"},
		// an escape's entity stays whole
		{"a@1", "a@&#8203;1"},
	} {
		if got := mdEscape(c.in); got != c.want {
			t.Errorf("mdEscape(%q): got %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := dotQuote("a\"b\\c\nd"), `"a\"b\\c\nd"`; got != want {
		t.Errorf("dotQuote: got %q, want %q", got, want)
	}
	if got, want := mermaidEscaper.escape(`"#1 <b>&`), "#34;#35;1 #60;b#62;#38;"; got != want {
		t.Errorf("mermaid: got %q, want %q", got, want)
	}
	if got, want := thousands(9123), "9,123"; got != want {
		t.Errorf("thousands: got %q", got)
	}
	if got, want := thousands(1234567), "1,234,567"; got != want {
		t.Errorf("thousands: got %q", got)
	}
	if got := clip("abcdef", 4); got != "abc…" {
		t.Errorf("clip: got %q", got)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	p := cases[0].plan(t)
	for _, f := range formats {
		if err := f.render(failWriter{}, p); err == nil {
			t.Errorf("%s: no error from a failing writer", f.ext)
		}
	}
}

// TestEmptyWave: a wave without lots renders in every format.
func TestEmptyWave(t *testing.T) {
	cfg, diags := spec.NewLoader().LoadBytes([]byte("wave \"empty\" {}\n"), "empty/wave.hcl", spec.Options{})
	if diags.HasErrors() {
		t.Skipf("the spec refuses a wave without lots: %s", diags.Error())
	}
	p := build(t, planner.Input{Config: cfg})
	for _, f := range formats {
		var buf bytes.Buffer
		if err := f.render(&buf, p); err != nil {
			t.Fatalf("%s: %v", f.ext, err)
		}
		if f.ext == "json" {
			if err := schemacheck.Validate("plan.schema.json", buf.Bytes()); err != nil {
				t.Fatalf("json: %v\n%s", err, buf.String())
			}
		}
		if f.ext == "txt" && !strings.Contains(buf.String(), "No lots in the plan.") {
			t.Errorf("txt:\n%s", buf.String())
		}
	}
}

// TestGuards: every format says per repository whether pushes are prevented
// or only detected, and warns about an agent without its sandbox and a run
// too long for one argument.
func TestGuards(t *testing.T) {
	p := cases[6].plan(t)
	outs := map[string]string{}
	for _, f := range formats {
		var buf bytes.Buffer
		if err := f.render(&buf, p); err != nil {
			t.Fatal(err)
		}
		outs[f.ext] = buf.String()
	}
	for ext, want := range map[string][]string{
		"txt": {
			"Pushes:    prevented in app; only detected in tools (command lot gen; agent nobox: sandbox = false)",
			"⚠ agent nobox has sandbox = false: a push from its sessions (lot script) is only detected after the session, not prevented",
			"⚠ lot gen: its run command is 131,074 bytes, more than one argument may have (131,071 bytes on Linux)",
		},
		"json": {`"pushes": "prevented",`, `"pushes": "detected",`, `"pushes_reason": "command lot gen; agent nobox: sandbox = false"`, `"kind": "no-sandbox"`, `"kind": "long-command"`},
		"md":   {"**Pushes:** prevented in app; only detected in tools", "- ⚠ agent nobox has sandbox = false"},
	} {
		for _, s := range want {
			if !strings.Contains(outs[ext], s) {
				t.Errorf("%s lacks %q:\n%s", ext, s, outs[ext])
			}
		}
	}
	// Offline, a lot whose agent has its sandbox on is "unknown" in the
	// repository's line: only the machine can tell.
	off := build(t, planner.Input{Config: load(t, "testdata/guards/wave.hcl")})
	var text bytes.Buffer
	if err := Text(&text, off, Options{}); err != nil {
		t.Fatal(err)
	}
	if s := "Pushes:    only detected in tools (command lot gen; agent nobox: sandbox = false); unknown (offline) in app"; !strings.Contains(text.String(), s) {
		t.Errorf("offline text lacks %q:\n%s", s, text.String())
	}
}
