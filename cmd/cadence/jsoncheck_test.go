package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// snakeCase is the rule for every key of cadence's machine output.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// userMaps are the keys whose value, when it is an object, is a map keyed
// by user data, not by field names: its keys are not checked (its values
// are). lots: the state file's lots by lot id (status -json, in "state");
// also_commits: a step's commits by repository name; base_shas: a saved
// plan's bases by repository name. Any other object is a Go struct or a
// map of enum values (by_action) and must be snake_case throughout.
var userMaps = map[string]bool{"lots": true, "also_commits": true, "base_shas": true}

// jsonCheck is the script command json-check [-lines] FILE: FILE (or
// stdout) is exactly one JSON document, or with -lines one per line
// (NDJSON, as apply -json), and every key in it is snake_case
// (snakeCase), but those of userMaps.
func jsonCheck(ts *testscript.TestScript, neg bool, args []string) {
	lines := len(args) == 2 && args[0] == "-lines"
	if lines {
		args = args[1:]
	}
	if len(args) != 1 || neg {
		ts.Fatalf("usage: json-check [-lines] FILE")
	}
	data := ts.ReadFile(args[0])
	docs := []string{data}
	if lines {
		docs = strings.Split(strings.TrimRight(data, "\n"), "\n")
	}
	for _, doc := range docs {
		v, err := oneDocument(doc)
		if err != nil {
			ts.Fatalf("%s: %v:\n%s", args[0], err, doc)
		}
		if bad := badKeys(v, "$"); len(bad) > 0 {
			ts.Fatalf("%s: keys that are not snake_case: %s", args[0], strings.Join(bad, ", "))
		}
	}
	ts.Logf("%s: %d JSON document(s), keys snake_case", args[0], len(docs))
}

// oneDocument decodes doc, which must hold one JSON value and nothing else
// but white space.
func oneDocument(doc string) (any, error) {
	if strings.TrimSpace(doc) == "" {
		return nil, fmt.Errorf("no JSON document")
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON document")
	}
	return v, nil
}

// badKeys lists, with their paths, the keys of v that are not snake_case.
func badKeys(v any, path string) []string {
	var bad []string
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if !snakeCase.MatchString(k) {
				bad = append(bad, path+"."+k)
			}
			if m, ok := child.(map[string]any); ok && userMaps[k] {
				for id, val := range m {
					bad = append(bad, badKeys(val, path+"."+k+"["+id+"]")...)
				}
				continue
			}
			bad = append(bad, badKeys(child, path+"."+k)...)
		}
	case []any:
		for i, child := range x {
			bad = append(bad, badKeys(child, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return bad
}

// TestBadKeys makes sure json-check can fail: Go's field names, camelCase
// and dashes are caught at any depth, the keys of user maps are not.
func TestBadKeys(t *testing.T) {
	for doc, want := range map[string]int{
		`{"slots": [{"Index": 0, "Held": true, "Holder": null}]}`:            3,
		`{"state": {"lots": {"My-Lot": {"status": "done", "baseSHA": ""}}}}`: 1,
		`{"a": {"b": [{"c-d": 1}]}}`:                                         1,
		`{"lots": {"Lot.1": {"also_commits": {"Web-App": ["x"]}}}}`:          0,
		`{"by_action": {"run": 1, "done": 0}, "x_1": [1, "A"]}`:              0,
	} {
		v, err := oneDocument(doc)
		if err != nil {
			t.Fatal(err)
		}
		if got := badKeys(v, "$"); len(got) != want {
			t.Errorf("%s: bad keys %v, want %d", doc, got, want)
		}
	}
	for _, doc := range []string{"", "{} {}", "{\"a\": 1}\n{\"b\": 2}", "Plan for wave"} {
		if _, err := oneDocument(doc); err == nil {
			t.Errorf("%q: taken for one JSON document", doc)
		}
	}
}
