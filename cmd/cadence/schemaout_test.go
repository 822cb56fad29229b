package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/cli"
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonSchemas is the schema (in schemas/) of each command's -json output,
// one per command family. A document with "diagnostics" (a wave with
// errors: validate, plan, graph, apply) is diagnostics.schema.json
// whatever the command; apply -json prints one event a line.
var jsonSchemas = map[string]string{
	"validate": "diagnostics.schema.json",
	"plan":     "plan.schema.json",
	"show":     "plan.schema.json",
	"apply":    "events.schema.json",
	"graph":    "graph.schema.json",
	"status":   "status.schema.json",
	"hold":     "hold.schema.json",
	"release":  "hold.schema.json",
	"answer":   "steer.schema.json",
	"drop":     "steer.schema.json",
	"stop":     "steer.schema.json",
	"logs":     "logs.schema.json",
	"clean":    "clean.schema.json",
	"list":     "list.schema.json",
	"fmt":      "fmt.schema.json",
	"init":     "init.schema.json",
	"version":  "version.schema.json",
}

// noJSON are the commands without a -json form (a usage error).
var noJSON = map[string]bool{"help": true, "completion": true, "lsp": true, "engine": true, "worker": true}

// schemaLogEnv names the file where the testscripts' cadence appends each
// -json output that does not validate (TestScripts fails the script when
// it is not empty at the end).
const schemaLogEnv = "CADENCE_TEST_SCHEMA_LOG"

// cadenceMain is the cadence program of the testscripts: cli.Main, and,
// when the command asks for JSON and $CADENCE_TEST_SCHEMA_LOG is set, its
// standard output is checked against the command's schema (checkJSONOutput)
// and what does not validate is appended to that file.
func cadenceMain(args []string) int {
	logPath := os.Getenv(schemaLogEnv)
	cmd, asJSON := jsonCommand(args)
	if logPath == "" || !asJSON {
		return cli.Main(args, os.Stdin, os.Stdout, os.Stderr)
	}
	var out bytes.Buffer
	code := cli.Main(args, os.Stdin, io.MultiWriter(os.Stdout, &out), os.Stderr)
	if err := checkJSONOutput(cmd, out.Bytes()); err != nil {
		f, ferr := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if ferr == nil {
			fmt.Fprintf(f, "cadence %s: %v\n", strings.Join(args, " "), err)
			f.Close()
		}
	}
	return code
}

// jsonCommand is the command of a cadence command line (its first word
// that is not a flag) and whether the line asks for JSON (-json, or
// -format json).
func jsonCommand(args []string) (cmd string, asJSON bool) {
	for i, a := range args {
		if cmd == "" {
			if !strings.HasPrefix(a, "-") {
				cmd = a
			}
			continue
		}
		switch {
		case a == "--":
			return cmd, asJSON
		case a == "-json" || a == "--json" || a == "-json=true" || a == "-format=json" || a == "--format=json":
			asJSON = true
		case (a == "-format" || a == "--format") && i+1 < len(args) && args[i+1] == "json":
			asJSON = true
		}
	}
	return cmd, asJSON
}

// checkJSONOutput checks out, what cadence cmd printed with -json, against
// the command's schema (jsonSchemas): nothing at all is fine (a command that
// fails prints nothing there); apply's lines are events unless the output
// is one diagnostics document.
func checkJSONOutput(cmd string, out []byte) error {
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	name, ok := jsonSchemas[cmd]
	if !ok {
		return fmt.Errorf("no schema for the -json output of %q", cmd)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(out, &top) == nil {
		if _, diags := top["diagnostics"]; diags {
			name = "diagnostics.schema.json"
		}
		return detailed(schemacheck.Validate(name, out))
	}
	if cmd != "apply" {
		return fmt.Errorf("not one JSON document: %.200s", out)
	}
	var errs []error
	for i, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if err := schemacheck.Validate(name, []byte(line)); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", i+1, detailed(err)))
		}
	}
	return errors.Join(errs...)
}

// detailed is err with every violation a schema validation found, each
// with its place in the document (a ValidationError's Error is only its
// first line).
func detailed(err error) error {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return fmt.Errorf("%#v", ve)
	}
	return err
}

// TestCheckJSONOutputFails makes sure the check of the testscripts' -json
// outputs can fail: a key missing, a key too many, a wrong type, an event
// line off schema, a command without a schema.
func TestCheckJSONOutputFails(t *testing.T) {
	for _, c := range []struct{ cmd, out string }{
		{"list", `{"format_version": 1, "wave": "w", "file": "w.hcl"}`},
		{"list", `{"format_version": 1, "wave": "w", "file": "w.hcl", "lots": [], "extra": 1}`},
		{"version", `{"format_version": 1, "version": 7}`},
		{"hold", `{"format_version": 2, "released": "me", "live_holds": 0}`},
		{"apply", `{"time": "2025-01-01T00:00:00Z", "kind": "lot-start", "usage": {}}` + "\n" + `{"kind": "nope"}` + "\n"},
		{"validate", `{"format_version": 1, "valid": true}`},
		{"frobnicate", `{}`},
		{"status", "not json"},
	} {
		if err := checkJSONOutput(c.cmd, []byte(c.out)); err == nil {
			t.Errorf("cadence %s -json printing %s: taken as valid", c.cmd, c.out)
		}
	}
	if err := checkJSONOutput("list", []byte(`{"format_version": 1, "wave": "w", "file": "w.hcl", "lots": []}`)); err != nil {
		t.Errorf("a valid list -json: %v", err)
	}
	if err := checkJSONOutput("drop", nil); err != nil {
		t.Errorf("no output: %v", err)
	}
}

// TestEveryCommandHasSchema checks that every command cadence help lists
// has a schema for its -json output, or is one of those without a -json
// form, and that jsonCommand finds the command and its -json.
func TestEveryCommandHasSchema(t *testing.T) {
	var help bytes.Buffer
	cli.Main([]string{"help"}, strings.NewReader(""), &help, io.Discard)
	names := regexp.MustCompile(`(?m)^  ([a-z]+) `).FindAllStringSubmatch(help.String(), -1)
	if len(names) < 15 {
		t.Fatalf("found %d commands in cadence help:\n%s", len(names), help.String())
	}
	for _, m := range names {
		if _, ok := jsonSchemas[m[1]]; !ok && !noJSON[m[1]] {
			t.Errorf("cadence %s: no schema for its -json output (jsonSchemas)", m[1])
		}
	}
	for line, want := range map[string]string{
		"-chdir=x plan -json w.hcl":     "plan",
		"graph -format json":            "graph",
		"plan -format=json":             "plan",
		"apply -auto-approve -json":     "apply",
		"logs -json -step 0 wave.hcl a": "logs",
	} {
		if cmd, asJSON := jsonCommand(strings.Fields(line)); cmd != want || !asJSON {
			t.Errorf("%q: command %q, json %v", line, cmd, asJSON)
		}
	}
	if _, asJSON := jsonCommand([]string{"plan", "-format", "markdown"}); asJSON {
		t.Error("plan -format markdown taken for JSON")
	}
}
