package schemacheck_test

import (
	"encoding/json"
	"io/fs"
	"slices"
	"strconv"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/schemas"
)

// stepKindSchemas are the schemas that name step kinds: the state file's
// steps, the plan's steps and the events of apply -json.
var stepKindSchemas = []string{"state.schema.json", "plan.schema.json", "events.schema.json"}

// TestStepKindEnums reads the step-kind table: every enum of an embedded
// schema that lists step kinds (one with "implement" and "review") lists
// exactly state.Kinds(), in its order, and each of stepKindSchemas has
// one; so a new step kind fails here until every schema that lists the
// kinds lists it.
func TestStepKindEnums(t *testing.T) {
	var want []string
	for _, k := range state.Kinds() {
		want = append(want, string(k.Kind))
	}
	entries, err := fs.ReadDir(schemas.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	for _, e := range entries {
		b, err := fs.ReadFile(schemas.FS, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		walkEnums(doc, "", func(at string, enum []string) {
			if !slices.Contains(enum, "implement") || !slices.Contains(enum, "review") {
				return
			}
			found[e.Name()]++
			if !slices.Equal(enum, want) {
				t.Errorf("%s %s: the step kinds are %q, want state.Kinds() %q (internal/state/kinds.go)", e.Name(), at, enum, want)
			}
		})
	}
	for _, name := range stepKindSchemas {
		if found[name] == 0 {
			t.Errorf("%s lists no step kinds", name)
		}
	}
}

// walkEnums calls f with the JSON pointer and the strings of every "enum"
// array of strings in v.
func walkEnums(v any, at string, f func(at string, enum []string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if arr, ok := c.([]any); ok && k == "enum" {
				var enum []string
				for _, s := range arr {
					if str, ok := s.(string); ok {
						enum = append(enum, str)
					}
				}
				f(at+"/enum", enum)
				continue
			}
			walkEnums(c, at+"/"+k, f)
		}
	case []any:
		for i, c := range x {
			walkEnums(c, at+"/"+strconv.Itoa(i), f)
		}
	}
}
