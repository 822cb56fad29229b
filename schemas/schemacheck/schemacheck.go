// Package schemacheck validates JSON documents against cadence's embedded
// schemas with a real JSON Schema validator (santhosh-tekuri/jsonschema).
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
	compileOnce sync.Once
	compiled    map[string]*jsonschema.Schema
	compileErr  error
)

func compileAll() {
	c := jsonschema.NewCompiler()
	entries, err := schemas.FS.ReadDir(".")
	if err != nil {
		compileErr = err
		return
	}
	for _, e := range entries {
		b, _ := schemas.FS.ReadFile(e.Name())
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
			return
		}
		if err := c.AddResource(schemas.BaseURL+e.Name(), doc); err != nil {
			compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
			return
		}
	}
	compiled = map[string]*jsonschema.Schema{}
	for _, e := range entries {
		s, err := c.Compile(schemas.BaseURL + e.Name())
		if err != nil {
			compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
			return
		}
		compiled[e.Name()] = s
	}
}

// Validate checks the JSON document data against the named schema (for
// example "plan.schema.json"). The error lists every violation.
func Validate(name string, data []byte) error {
	compileOnce.Do(compileAll)
	if compileErr != nil {
		return compileErr
	}
	s := compiled[name]
	if s == nil {
		return fmt.Errorf("no schema %q", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(doc)
}

// ValidateValue marshals v and validates it against the named schema.
func ValidateValue(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return Validate(name, b)
}
