package codex

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// StrictSchema returns the variant of a report schema (a JSON Schema
// document of package schemas) that the Responses API's strict
// structured outputs accept, for --output-schema: "$schema" and "$id"
// dropped; every object schema with "additionalProperties": false and
// every property in "required", a property the original does not require
// made nullable (its "type" gains "null"; an "enum" gains null), so that
// the model answers null where the original lets it leave the property
// out. Keywords strict mode refuses ("minimum" and the like) are kept:
// the real API ignores them for these schemas' types. Report turns the
// nulls back into absent properties before the original is checked.
func StrictSchema(b []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("report schema: %w", err)
	}
	delete(doc, "$schema")
	delete(doc, "$id")
	if err := strictify(doc); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// strictify makes schema s strict in place, and every schema under it.
func strictify(s map[string]any) error {
	if props, ok := s["properties"].(map[string]any); ok {
		req := map[string]bool{}
		if r, ok := s["required"].([]any); ok {
			for _, n := range r {
				if name, ok := n.(string); ok {
					req[name] = true
				}
			}
		}
		names := make([]string, 0, len(props))
		for name, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				return fmt.Errorf("report schema: property %q is not a schema", name)
			}
			if err := strictify(ps); err != nil {
				return err
			}
			if !req[name] {
				nullable(ps)
			}
			names = append(names, name)
		}
		sort.Strings(names)
		all := make([]any, len(names))
		for i, n := range names {
			all[i] = n
		}
		s["required"] = all
		s["additionalProperties"] = false
	} else if s["type"] == "object" {
		s["properties"] = map[string]any{}
		s["required"] = []any{}
		s["additionalProperties"] = false
	}
	if items, ok := s["items"].(map[string]any); ok {
		return strictify(items)
	}
	return nil
}

// nullable lets schema s take null too.
func nullable(s map[string]any) {
	switch t := s["type"].(type) {
	case string:
		if t != "null" {
			s["type"] = []any{t, "null"}
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(t, "null")
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
		s["enum"] = append(e, nil)
	}
}
