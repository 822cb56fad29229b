package lsp

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl-lang/decoder"
	"github.com/hashicorp/hcl-lang/reference"
	"github.com/hashicorp/hcl-lang/schema"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// TestTargetSchema checks that reference targets collected with the
// schema's target view are those hcl-lang collects with the whole
// schema, on waves with every kind of target and on broken ones.
func TestTargetSchema(t *testing.T) {
	body, err := waveSchema(spec.DefaultAgentKinds, nil)
	if err != nil {
		t.Fatal(err)
	}
	view := targetSchema(body)
	waves := map[string]string{
		"wave": wave,
		"typed": wave + `
variable "v" {
  type    = object({ a = string, b = list(number) })
  default = { a = "x", b = [1] }
}
variable "w" {}
locals {
  o = { a = 1, b = { c = "d" } }
  s = "x"
  l = [lot.a]
}
defaults {
  agent = agent.fast
}
`,
		"broken": wave + `
lot {
  brief = "no label"
}
lot "x" "y" {
  brief = "two labels"
}
lot "c" {
  depends_on = [lot.a, lot.]
}
`,
	}
	for _, name := range []string{"../../examples/quickstart/wave.hcl", "../../examples/multi-repo/wave.hcl"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		waves[name] = string(src)
	}
	for name, text := range waves {
		d := newDocument("file:///w/wave.hcl", "/w/wave.hcl", []byte(text), 1)
		want, got := collectTargets(t, d, body), collectTargets(t, d, view)
		if len(want) < 3 {
			t.Fatalf("%s: %d targets: the wave declares more", name, len(want))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: targets with the view:\n%s\nwith the whole schema:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// collectTargets lists the targets hcl-lang collects from d with schema
// s, as sorted strings.
func collectTargets(t *testing.T, d *document, s *schema.BodySchema) []string {
	t.Helper()
	ctx := &decoder.PathContext{Schema: s, Files: map[string]*hcl.File{d.filename: d.file}}
	pd, err := decoder.NewDecoder(fixed{d.path(), ctx}).Path(d.path())
	if err != nil {
		t.Fatal(err)
	}
	targets, err := pd.CollectReferenceTargets()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(reference.Targets, string)
	walk = func(ts reference.Targets, indent string) {
		for _, x := range ts {
			var r, def string
			if x.RangePtr != nil {
				r = x.RangePtr.String()
			}
			if x.DefRangePtr != nil {
				def = x.DefRangePtr.String()
			}
			typ := "nil"
			if x.Type != cty.NilType {
				typ = x.Type.GoString()
			}
			out = append(out, fmt.Sprintf("%s%s %s local=%s scoped=%v range=%s def=%s type=%s name=%s %q",
				indent, x.Addr, x.ScopeId, x.LocalAddr, x.BlockScoped, r, def, typ, x.Name, x.Description.Value))
			walk(x.NestedTargets, indent+"  ")
		}
	}
	walk(targets, "")
	sort.Strings(out)
	return out
}

// TestKindAttributes: the attributes an agent kind's adapter adds
// (Options.AgentAttributes) are in the agent block's schema with their
// constraint (an enum's values offered) and the docs' description; without
// them the block has the common attributes only.
func TestKindAttributes(t *testing.T) {
	attrs := map[string][]spec.KindAttribute{"claude": {
		{Name: "permission_mode", Type: cty.String, Enum: []string{"plan", "acceptEdits"},
			Doc: spec.AttributeDoc{Default: "`\"acceptEdits\"`", Meaning: "`--permission-mode`"}},
		{Name: "allowed_tools", Type: cty.List(cty.String)},
		{Name: "max_retries", Type: cty.Number},
	}}
	s, err := waveSchema([]string{"claude"}, attrs)
	if err != nil {
		t.Fatal(err)
	}
	body := s.Blocks["agent"].Body
	pm := body.Attributes["permission_mode"]
	if pm == nil || !strings.Contains(pm.Description.Value, "--permission-mode") {
		t.Fatalf("permission_mode: %+v", pm)
	}
	if o, ok := pm.Constraint.(schema.OneOf); !ok || len(o) != 3 {
		t.Errorf("permission_mode constraint %#v: want its two values, then any string", pm.Constraint)
	}
	if _, ok := body.Attributes["allowed_tools"].Constraint.(schema.List); !ok {
		t.Errorf("allowed_tools constraint %#v", body.Attributes["allowed_tools"].Constraint)
	}
	if got, want := len(body.Attributes), len(spec.AgentCommon())+3; got != want {
		t.Errorf("agent block: %d attributes, want %d", got, want)
	}
	s, _ = waveSchema([]string{"claude"}, nil)
	if s.Blocks["agent"].Body.Attributes["permission_mode"] != nil {
		t.Error("permission_mode without the adapter's attributes")
	}
}

// TestKindAttributesSameName: two kinds with an attribute of the same name
// each keep their own doc in its hover, after the kind's name.
func TestKindAttributesSameName(t *testing.T) {
	attrs := map[string][]spec.KindAttribute{
		"claude": {{Name: "model", Type: cty.String, Doc: spec.AttributeDoc{Meaning: "claude's model"}}},
		"codex":  {{Name: "model", Type: cty.String, Doc: spec.AttributeDoc{Meaning: "codex's model"}}},
	}
	s, err := waveSchema([]string{"claude", "codex"}, attrs)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Blocks["agent"].Body.Attributes["model"]
	if m == nil || !strings.Contains(m.Description.Value, "Kind `claude`: claude's model") || !strings.Contains(m.Description.Value, "Kind `codex`: codex's model") {
		t.Fatalf("model: %+v", m)
	}
}
