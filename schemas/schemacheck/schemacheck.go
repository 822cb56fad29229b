// Package schemacheck validates JSON documents against cadence's embedded
// schemas with a real JSON Schema validator (santhosh-tekuri/jsonschema).
//
// The cadence binary links it, for the agents' structured reports
// (agent.DecodeReport): the Codex CLI sends the report schema to the API
// and does not check the answer, so cadence must, and one check against
// the schema itself serves every adapter and every step kind's schema.
// The rest (wave, state, the -json outputs) is validated in tests only.
// A schema is compiled the first time it is asked for, so a run that
// validates only reports never compiles the wave schema.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cadence-run/cadence/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled = map[string]*jsonschema.Schema{}
)

// schema returns the compiled schema of the named file, compiling it (and
// what it refers to) on first use; nil and no error when there is no such
// file.
func schema(name string) (*jsonschema.Schema, error) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[name]; ok {
		return s, nil
	}
	if compiler == nil {
		c := jsonschema.NewCompiler()
		entries, err := schemas.FS.ReadDir(".")
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			b, _ := schemas.FS.ReadFile(e.Name())
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				return nil, fmt.Errorf("schema %s: %w", e.Name(), err)
			}
			if err := c.AddResource(schemas.BaseURL+e.Name(), doc); err != nil {
				return nil, fmt.Errorf("schema %s: %w", e.Name(), err)
			}
		}
		compiler = c
	}
	if _, err := schemas.FS.Open(name); err != nil {
		return nil, nil
	}
	s, err := compiler.Compile(schemas.BaseURL + name)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	compiled[name] = s
	return s, nil
}

// Validate checks the JSON document data against the named schema (for
// example "plan.schema.json"). The error lists every violation.
func Validate(name string, data []byte) error {
	_, err := validate(name, data)
	return err
}

// validate is Validate that also gives back the decoded document.
func validate(name string, data []byte) (any, error) {
	s, err := schema(name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("no schema %q", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return doc, s.Validate(doc)
}

// ValidateValue marshals v and validates it against the named schema.
func ValidateValue(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return Validate(name, b)
}
