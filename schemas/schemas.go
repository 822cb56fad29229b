// Package schemas embeds cadence's JSON Schemas (draft 2020-12) and validates
// documents against them: wave.schema.json (the wave file's JSON syntax),
// plan.schema.json (plan -json), and the others as the executor adds them.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds the schema files.
//
//go:embed *.schema.json
var FS embed.FS

// BaseURL is the $id prefix of every schema.
const BaseURL = "https://cadence.run/schemas/"

var (
	compileOnce sync.Once
	compiled    map[string]*jsonschema.Schema
	compileErr  error
)

func compileAll() {
	c := jsonschema.NewCompiler()
	entries, err := FS.ReadDir(".")
	if err != nil {
		compileErr = err
		return
	}
	for _, e := range entries {
		b, _ := FS.ReadFile(e.Name())
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
			return
		}
		if err := c.AddResource(BaseURL+e.Name(), doc); err != nil {
			compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
			return
		}
	}
	compiled = map[string]*jsonschema.Schema{}
	for _, e := range entries {
		s, err := c.Compile(BaseURL + e.Name())
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
