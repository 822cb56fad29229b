package spec

import (
	"strings"
	"testing"
	"time"
)

const head = `wave "w" {
  budget = "1M"
}
repo "api" {
  path = "."
}
`

// TestDiagnostics checks each class of wave-file error: its summary, a piece
// of its detail, and the line it points at.
func TestDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name, src, summary, detail string
		line                       int
	}{
		{"unknown block", head + `lots "x" {}`, "Unsupported block type", `Did you mean "lot"?`, 7},
		{"unknown attribute", head + "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  modle = \"opus\"\n}", "Unsupported argument", `Did you mean "model"?`, 10},
		{"wrong type", head + "lot \"a\" {\n  repo = repo.api\n  brief = [\"x\"]\n}", "Incorrect attribute value type", "a string required, but got a list", 9},
		{"wrong type number", `wave "w" { max_sessions = "two" }`, "Incorrect attribute value type", "a number required", 1},
		{"duplicate lot", head + "lot \"a\" {\n  run = \"true\"\n}\nlot \"a\" {\n  run = \"true\"\n}", "Duplicate lot", "already declared at", 10},
		{"duplicate repo", head + "repo \"api\" {\n  path = \".\"\n}", "Duplicate repo", "wave.hcl:4", 7},
		{"unknown lot ref", head + "lot \"L40\" {\n  run = \"true\"\n}\nlot \"b\" {\n  run = \"true\"\n  depends_on = [lot.L4O]\n}", "Reference to undeclared lot", "Did you mean lot.L40?", 12},
		{"unknown repo ref", head + "lot \"a\" {\n  repo = repo.apj\n  brief = \"x\"\n}", "Reference to undeclared repo", "Did you mean repo.api?", 8},
		{"unknown agent ref", head + "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  agent = agent.claud\n}", "Reference to undeclared agent", "Did you mean agent.claude?", 10},
		{"wrong ref kind", head + "lot \"a\" {\n  repo = lot.a\n  brief = \"x\"\n}", "Wrong kind of reference", "refers to a lot", 8},
		{"invalid lot id", head + "lot \"9lives\" {\n  run = \"true\"\n}", "Invalid lot id", "starting with a letter", 7},
		{"both brief and run", head + "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  run = \"true\"\n}", "Both brief and run", "exactly one", 10},
		{"neither brief nor run", head + "lot \"a\" {\n  repo = repo.api\n}", "Neither brief nor run", "needs a brief", 7},
		{"self dependency", head + "lot \"a\" {\n  run = \"true\"\n  depends_on = [lot.a]\n}", "Self-dependency", "depends on itself", 9},
		{"cycle", head + "lot \"a\" {\n  run = \"true\"\n  depends_on = [lot.c]\n}\nlot \"b\" {\n  run = \"true\"\n  depends_on = [lot.a]\n}\nlot \"c\" {\n  run = \"true\"\n  depends_on = [lot.b]\n}", "Dependency cycle", "a → c → b → a", 9},
		{"also own repo", head + "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  also = [repo.api]\n}", "Own repo in also", "own repo", 10},
		{"lot budget above wave", head + "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  budget = \"2M\"\n}", "Lot budget above the wave budget", "more than the whole wave's budget of 1M", 10},
		{"parallel below 1", head + "repo \"web\" {\n  path = \".\"\n  parallel = 0\n}", "Invalid value", `"parallel" must be at least 1`, 9},
		{"max_sessions below 1", `wave "w" { max_sessions = 0 }`, "Invalid value", `"max_sessions" must be at least 1`, 1},
		{"missing wave", `repo "api" { path = "." }`, "Missing wave block", "needs one wave block", 1},
		{"bad budget", `wave "w" { budget = "lots" }`, "Invalid token count", "is not a token count", 1},
		{"bad duration", head + "lot \"a\" {\n  run = \"true\"\n  estimate = \"3\"\n}", "Invalid duration", "with a unit", 9},
		{"bad on_quota", `wave "w" { on_quota = "wiat" }`, "Invalid value", `Did you mean "wait"?`, 1},
		{"command lot with model", head + "lot \"a\" {\n  run = \"true\"\n  model = \"opus\"\n}", "Not for a command lot", "agent lots only", 9},
		{"agent lot without repo", head + "lot \"a\" {\n  brief = \"x\"\n}", "Missing repo", "needs a repo", 7},
		{"missing repo path", head + "repo \"web\" {\n}", "Missing required argument", `"path" is required`, 7},
		{"syntax error", head + "lot \"a\" {\n  run = \n}", "Invalid expression", "", 8},
		{"unknown variable", head + "lot \"a\" {\n  run = var.nope\n}", "Unsupported attribute", "", 8},
		{"missing file", head + "lot \"a\" {\n  run = file(\"nope.sh\")\n}", "Error in function call", "no file", 8},
		{"required variable", "variable \"x\" {}\n" + head, "No value for required variable", "-var x=VALUE", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := load(t, tc.src, Options{})
			for _, d := range diags {
				if d.Summary != tc.summary {
					continue
				}
				if !strings.Contains(d.Detail, tc.detail) {
					t.Errorf("detail %q does not contain %q", d.Detail, tc.detail)
				}
				if d.Subject == nil || d.Subject.Start.Line != tc.line {
					t.Errorf("subject %v, want line %d", d.Subject, tc.line)
				}
				return
			}
			t.Errorf("no %q diagnostic; got: %v", tc.summary, diags)
		})
	}
}

// TestAllErrorsReported checks that one run reports every problem, not the first.
func TestAllErrorsReported(t *testing.T) {
	src := head + `
lot "a" {
  repo = repo.nope
  brief = "x"
}
lot "a" {
  run = "true"
}
lot "b" {
  run = "true"
  depends_on = [lot.zz]
}
repo "web" {
  path = "."
  parallel = 0
}
`
	_, diags := load(t, src, Options{})
	want := []string{"Reference to undeclared repo", "Duplicate lot", "Reference to undeclared lot", "Invalid value"}
	for _, w := range want {
		found := false
		for _, d := range diags {
			found = found || d.Summary == w
		}
		if !found {
			t.Errorf("missing %q in %v", w, diags)
		}
	}
}

func TestVariablesAndLocals(t *testing.T) {
	src := `variable "model" { default = "sonnet" }
variable "passes" {
  type = number
}
locals {
  prefix = upper(var.model)
  brief  = "${local.prefix}: do it"
}
wave "w" {}
repo "api" { path = "." }
lot "a" {
  repo = repo.api
  brief = local.brief
  model = var.model
  fix_passes = var.passes
  title = format("%s-%d", lower("X"), 3)
}
`
	cfg, diags := load(t, src, Options{Vars: []string{"passes=5", "model=haiku"}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	a := cfg.Lot("a")
	if a.Brief != "HAIKU: do it" || a.Model != "haiku" || a.FixPasses != 5 || a.Title != "x-3" {
		t.Errorf("lot = %+v", a)
	}
	_, diags = load(t, src, Options{Vars: []string{"pases=5"}})
	if !strings.Contains(diags.Error(), `Did you mean "passes"?`) {
		t.Errorf("undeclared -var: %v", diags)
	}
}

func TestJSONSyntax(t *testing.T) {
	src := `{
  "wave": {"w": {"budget": "1.5M", "budget_usd": 12.5}},
  "repo": {"api": {"path": "."}},
  "lot": {
    "a": {"repo": "repo.api", "brief": "do a"},
    "b": {"repo": "repo.api", "brief": "do b", "depends_on": ["lot.a"], "estimate": "2h"}
  }
}`
	cfg, diags := NewLoader().LoadBytes([]byte(src), "/tmp/x/wave.hcl.json", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if cfg.Wave.Budget != 1_500_000 || cfg.Wave.BudgetUSD != 12_500_000 || cfg.Lot("b").DependsOn[0] != cfg.Lot("a") {
		t.Errorf("cfg = %+v", cfg)
	}
	_, diags = NewLoader().LoadBytes([]byte(`{"wave": {"w": {}}, "lot": {"a": {"run": "x", "depends_on": ["lot.q"]}}}`), "w.hcl.json", Options{})
	if !strings.Contains(diags.Error(), "Reference to undeclared lot") {
		t.Errorf("diags = %v", diags)
	}
}

// TestDefaults checks that defaults reach agent lots whole, and command lots
// only for what they mean there (timeout, estimate).
func TestDefaults(t *testing.T) {
	src := head + `defaults {
  model = "haiku"
  estimate = "2h"
  precheck = true
  timeout = "10m"
}
lot "a" {
  repo = repo.api
  brief = "x"
}
lot "c" {
  run = "true"
}
`
	cfg, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if a := cfg.Lot("a"); a.Model != "haiku" || !a.EstimateSet || !a.Precheck {
		t.Errorf("a = %+v", a)
	}
	if c := cfg.Lot("c"); c.Model != "" || c.Precheck || !c.EstimateSet || c.Estimate != 2*time.Hour || c.Timeout != 10*time.Minute {
		t.Errorf("c = %+v", c)
	}
}

// Numbers too large for their attribute say so (they are whole).
func TestDiagnosticsTooLarge(t *testing.T) {
	for _, tc := range []struct{ src, summary string }{
		{`wave "w" { budget = 9300000000000 }`, "Invalid token count"},
		{`wave "w" { max_sessions = 3000000000 }`, "Invalid value"},
	} {
		_, diags := load(t, tc.src, Options{})
		if !strings.Contains(diags.Error(), tc.summary) || !strings.Contains(diags.Error(), "too large") || strings.Contains(diags.Error(), "whole number") {
			t.Errorf("%s: %v, want %s saying too large", tc.src, diags, tc.summary)
		}
	}
}

// A variable with no value makes what depends on it unknown: its own
// error is reported, and no error of an attribute it leaves unknown.
func TestDiagnosticsMissingVariableNoFollowOn(t *testing.T) {
	for _, lot := range []string{
		"lot \"a\" {\n  repo = repo.api\n  brief = var.b\n}\n",
		// A command lot needs no repo: its run, unknown, still makes it one.
		"lot \"a\" {\n  run = var.b\n}\n",
	} {
		_, diags := load(t, "variable \"b\" {}\n"+head+lot, Options{})
		if !strings.Contains(diags.Error(), "No value for required variable") {
			t.Fatalf("diagnostics lack the missing variable: %v", diags)
		}
		for _, d := range diags {
			if d.Summary == "Neither brief nor run" || d.Summary == "Missing repo" {
				t.Errorf("%s: follow-on error: %s: %s", lot, d.Summary, d.Detail)
			}
		}
	}
}
