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
// that may import gitint or internal/proc directly, each with why: none.
// The orchestrator reaches git and child processes through the step runner
// (executor/step) and the merge queue (executor/mergequeue) only.
var orchestratorMayCall = map[string]string{}

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
		_, allowed := orchestratorMayCall[name]
		switch {
		case len(calls) > 0 && !allowed:
			t.Errorf("executor/%s imports %s: the orchestrator reaches git and child processes through executor/step", name, strings.Join(calls, ", "))
		case len(calls) == 0 && allowed:
			t.Errorf("executor/%s imports neither gitint nor internal/proc: take it out of orchestratorMayCall", name)
		}
	}
}
