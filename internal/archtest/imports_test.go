// Package archtest holds tests of the code's architecture: the direction of
// imports between cadence's packages (docs/architecture.md, "Import direction").
package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cadence-run/cadence/"

// forbidden maps a package (or a package tree, ending in "/...") to the
// packages it must never import, directly or through another package.
var forbidden = map[string][]string{
	"spec/...":              {"planner/...", "executor/...", "gitint/...", "internal/cli/...", "internal/state/...", "internal/layout/..."},
	"internal/state/...":    {"planner/...", "executor/...", "gitint/...", "internal/cli/..."},
	"internal/layout/...":   {"planner/...", "executor/...", "gitint/...", "internal/cli/...", "internal/state/..."},
	"internal/flock/...":    {"planner/...", "executor/...", "gitint/...", "internal/cli/...", "spec/...", "internal/state/..."},
	"internal/proc/...":     {"planner/...", "executor/...", "gitint/...", "internal/cli/...", "spec/...", "internal/state/..."},
	"internal/dag/...":      {"planner/...", "executor/...", "gitint/...", "internal/cli/...", "spec/...", "internal/state/..."},
	"internal/safefile/...": {"planner/...", "executor/...", "gitint/...", "internal/cli/...", "spec/...", "internal/state/...", "internal/layout/...", "internal/flock/...", "internal/proc/...", "internal/dag/..."},
	"planner/...":           {"executor/...", "gitint/...", "internal/cli/..."},
	"gitint/...":            {"executor/...", "planner/...", "internal/cli/..."},
	"executor/...":          {"internal/cli/..."},
	// the merge queue is given git, gates and guards through its own
	// interfaces: it depends on neither the orchestrator nor a step runner
	"executor/mergequeue/...": {"executor", "executor/step/...", "internal/cli/..."},
	// The step runner and its guard are below the orchestrator: the
	// orchestrator runs steps through step.Runner, never the reverse.
	"executor/step/...": {"executor", "executor/mergequeue/...", "internal/cli/..."},
	// the queue of remote steps carries step requests and results as
	// JSON: it knows neither the step runner nor the orchestrator
	"executor/remote/queue/...":  {"executor", "executor/step/...", "executor/mergequeue/...", "gitint/...", "internal/proc/...", "internal/cli/..."},
	"executor/remote/engine/...": {"executor", "executor/step/...", "executor/mergequeue/...", "gitint/...", "internal/proc/...", "internal/cli/..."},
	// the remote step runner is a step runner: below the orchestrator,
	// which the CLI's runner factory gives it to (docs/remote.md)
	"executor/remote": {"executor", "executor/mergequeue/...", "internal/cli/..."},
	// the repository transport of remote steps is git on bundle files
	// only: it knows neither the orchestrator, a step runner nor the queue
	// that moves its files (docs/remote.md, "Repository transport")
	"executor/remote/transport/...": {"executor", "executor/step/...", "executor/mergequeue/...", "executor/agent/...", "internal/cli/..."},
	// agent adapters see sessions, never the orchestrator, the planner or
	// git: spec's agent blocks reach them through agent.Registry, and the
	// executor's step through agent.Session (the conformance suite,
	// executor/agent/agenttest, makes its test repositories with gittest)
	"executor/agent":            {"executor", "planner/...", "gitint/..."},
	"executor/agent/claude/...": {"executor", "planner/...", "gitint/..."},
	// the language server starts no process and touches no git
	// (TestLanguageServerStartsNoProcess checks os/exec too)
	"internal/lsp/...": {"planner/...", "executor/...", "gitint/...", "internal/cli/...", "internal/state/...", "internal/layout/...", "internal/proc/...", "internal/flock/..."},
}

// TestLanguageServerStartsNoProcess checks that internal/lsp cannot start
// a process: neither it nor anything it imports, cadence's or not, imports
// os/exec, internal/proc or gitint.
func TestLanguageServerStartsNoProcess(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"internal/lsp").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "os/exec" || pkg == module+"internal/proc" || pkg == module+"gitint" {
			t.Errorf("internal/lsp depends on %s", pkg)
		}
	}
}

func matches(pkg, pattern string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

// deps lists every cadence package (tests excluded) with its transitive
// cadence dependencies, through go list.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "github.com/cadence-run/cadence/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	all := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(f[0], module)
		for _, d := range f[1:] {
			if rel, ok := strings.CutPrefix(d, module); ok {
				all[pkg] = append(all[pkg], rel)
			}
		}
		if _, ok := all[pkg]; !ok {
			all[pkg] = nil
		}
	}
	return all
}

// TestImportDirection fails when a lower package imports a higher one.
func TestImportDirection(t *testing.T) {
	all := deps(t)
	if len(all) < 10 {
		t.Fatalf("go list found only %d packages", len(all))
	}
	for pkg, ds := range all {
		for from, bans := range forbidden {
			if !matches(pkg, from) {
				continue
			}
			for _, d := range ds {
				for _, ban := range bans {
					if matches(d, ban) {
						t.Errorf("%s imports %s (directly or not): %s must not depend on %s", pkg, d, from, ban)
					}
				}
			}
		}
	}
}

// TestMatches checks the pattern helper the rules rely on.
func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pkg, pattern string
		want         bool
	}{
		{"executor", "executor/...", true},
		{"executor/agent/claude", "executor/...", true},
		{"executorx", "executor/...", false},
		{"planner", "planner", true},
		{"planner/render", "planner", false},
	} {
		if got := matches(c.pkg, c.pattern); got != c.want {
			t.Errorf("matches(%q, %q) = %v", c.pkg, c.pattern, got)
		}
	}
}
