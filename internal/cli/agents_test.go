package cli

import (
	"encoding/json"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"github.com/cadence-run/cadence/spec"
	"github.com/zclconf/go-cty/cty"
)

// sample returns a JSON value of type typ that the wave decoder would
// take: enum's first value for a string that has them.
func sample(typ cty.Type, enum []string) any {
	switch {
	case typ == cty.String && len(enum) > 0:
		return enum[0]
	case typ == cty.String:
		return "x"
	case typ == cty.Number:
		return 1
	case typ == cty.Bool:
		return true
	case typ.IsListType() || typ.IsSetType():
		return []any{sample(typ.ElementType(), nil)}
	case typ.IsMapType():
		return map[string]any{"k": sample(typ.ElementType(), nil)}
	case typ.IsObjectType():
		o := map[string]any{}
		for n, at := range typ.AttributeTypes() {
			o[n] = sample(at, nil)
		}
		return o
	}
	return "x"
}

// TestWaveSchemaAgentKinds: the editor schema of *.hcl.json files
// (schemas/wave.schema.json) takes every kind of the CLI's registry, and
// each adapter's own attributes in an agent block of its kind (claude's
// in a block that names no kind too), and refuses them in a block of
// another kind.
func TestWaveSchemaAgentKinds(t *testing.T) {
	reg := newAgents(agent.BrowserSetup{})
	attrs := reg.Attributes()
	doc := func(kind, attr string, v any) []byte {
		body := map[string]any{attr: v}
		if kind != "" {
			body["kind"] = kind
		}
		b, _ := json.Marshal(map[string]any{"wave": map[string]any{"w": map[string]any{}}, "agent": map[string]any{"a": body}})
		return b
	}
	for _, kind := range reg.Kinds() {
		if err := schemacheck.Validate("wave.schema.json", doc(kind, "command", "x")); err != nil {
			t.Errorf("kind %q: %v", kind, err)
		}
		for _, a := range attrs[kind] {
			v := sample(a.Type, a.Enum)
			if err := schemacheck.Validate("wave.schema.json", doc(kind, a.Name, v)); err != nil {
				t.Errorf("kind %q, %s = %v: %v", kind, a.Name, v, err)
			}
			if kind == "claude" {
				if err := schemacheck.Validate("wave.schema.json", doc("", a.Name, v)); err != nil {
					t.Errorf("no kind, %s = %v: %v", a.Name, v, err)
				}
			}
			for _, other := range reg.Kinds() {
				if other == kind || hasAttr(attrs[other], a.Name) {
					continue
				}
				if err := schemacheck.Validate("wave.schema.json", doc(other, a.Name, v)); err == nil {
					t.Errorf("kind %q takes %s, an attribute of kind %q only", other, a.Name, kind)
				}
			}
		}
	}
	if err := schemacheck.Validate("wave.schema.json", doc("no-such-kind", "command", "x")); err == nil {
		t.Error("the schema takes an agent of a kind no adapter runs")
	}
}

// hasAttr reports whether attrs has one named name.
func hasAttr(attrs []spec.KindAttribute, name string) bool {
	for _, a := range attrs {
		if a.Name == name {
			return true
		}
	}
	return false
}
