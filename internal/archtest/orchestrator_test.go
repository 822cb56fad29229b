package archtest

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// orchestratorMayCall are the files of package executor (the orchestrator)
// that still import gitint or internal/proc directly, each with why. Every
// other file reaches git and child processes through the step runner
// (executor/step) only.
var orchestratorMayCall = map[string]string{
	// The merge queue, until it moves to executor/mergequeue (temporary).
	"batch.go":     "merge queue",
	"queued.go":    "merge queue",
	"gates.go":     "merge queue",
	"integrate.go": "merge queue",
	"intent.go":    "merge queue",
	"steps.go":     "the merge queue's view of the guard (gitint.RefMove), until executor/mergequeue",
	// Apply's wiring: the real git (gitint.NewRepos) and SystemHost's
	// guard install, made where a run's resources are made.
	"apply.go": "Apply wires the real git",
	"host.go":  "SystemHost installs the guard",
}

// TestOrchestratorCallsNoGitOrProc fails when a non-test file of package
// executor imports gitint or internal/proc and is not in
// orchestratorMayCall, or when an allowed file outside the merge queue no
// longer does (the entry is then stale).
func TestOrchestratorCallsNoGitOrProc(t *testing.T) {
	files, err := filepath.Glob("../../executor/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files of package executor: %v", err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		var calls []string
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == module+"gitint" || p == module+"internal/proc" {
				calls = append(calls, strings.TrimPrefix(p, module))
			}
		}
		why, allowed := orchestratorMayCall[name]
		switch {
		case len(calls) > 0 && !allowed:
			t.Errorf("executor/%s imports %s: the orchestrator reaches git and child processes through executor/step", name, strings.Join(calls, ", "))
		case len(calls) == 0 && allowed && why != "merge queue":
			t.Errorf("executor/%s imports neither gitint nor internal/proc: take it out of orchestratorMayCall", name)
		}
	}
}
