package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/internal/cli"
	"github.com/cadence-run/cadence/schemas"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected output in the scripts")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"cadence": func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script: one per command and
// per class of diagnostic. Each script runs in a fresh folder with a git
// identity and a scratch HOME; $EXAMPLES is the examples folder.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			env.Setenv("GIT_AUTHOR_NAME", "cadence test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@cadence.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "cadence test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@cadence.invalid")
			env.Setenv("CADENCE_CLAUDE_BIN", "cadence-no-such-agent")
			env.Setenv("NO_COLOR", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// schema NAME FILE: FILE (or "stdout") validates against schemas/NAME.
			"schema": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: schema NAME FILE")
				}
				data := []byte(ts.ReadFile(args[1]))
				err := schemas.Validate(args[0], data)
				if neg && err == nil {
					ts.Fatalf("%s unexpectedly valid against %s", args[1], args[0])
				}
				if !neg && err != nil {
					ts.Fatalf("%s does not validate against %s: %v", args[1], args[0], err)
				}
			},
		},
	})
}
