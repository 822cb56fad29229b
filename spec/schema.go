package spec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// BlockType is one block type of the wave language as the decoder reads
// it: its labels and the attributes its body accepts. Schema returns them
// from the decoder's own body schemas, so tools that describe the language
// (the language server) cannot drift from what validate accepts.
type BlockType struct {
	// Type is the block's keyword: "wave", "lot", …
	Type string
	// Labels are the names of its labels ("name", "id"); empty for none.
	Labels []string
	// Attributes are the attributes its body accepts, in the decoder's
	// order. An agent block's are the common ones (AgentCommon); each
	// kind's adapter adds its own (KindAttribute).
	Attributes []hcl.AttributeSchema
}

// Schema returns the top-level block types of a wave file in the
// decoder's order. The root's "$schema" key (JSON syntax only) is not a
// block and is left out.
func Schema() []BlockType {
	bodies := map[string][]hcl.AttributeSchema{
		"wave":     waveSchema.Attributes,
		"defaults": defaultsSchema.Attributes,
		"agent":    agentCommon,
		"repo":     repoSchema.Attributes,
		"lot":      lotSchema.Attributes,
		"variable": variableSchema.Attributes,
		"locals":   nil, // any name: each attribute is a local value
		"executor": executorSchema.Attributes,
	}
	var out []BlockType
	for _, b := range rootSchema.Blocks {
		out = append(out, BlockType{Type: b.Type, Labels: append([]string(nil), b.LabelNames...), Attributes: append([]hcl.AttributeSchema(nil), bodies[b.Type]...)})
	}
	return out
}

// KindAttribute describes an attribute an agent kind's adapter adds to
// the agent block, for the tools that describe the language (the language
// server): its name and the type of its value (cty.String, cty.Number,
// cty.Bool or cty.List(cty.String)), with, for a string, the values it
// takes (nil: any). Its documentation is Doc("agent", Name).
type KindAttribute struct {
	Name string
	Type cty.Type
	Enum []string
	// Doc is the attribute's description, from the kind's table in
	// docs/wave-file.md (the adapter's own generated copy of it): the
	// language server's hover and the editor schema's test read it, so two
	// kinds' attributes of the same name keep their own docs.
	Doc AttributeDoc
}

// AttributeDoc is the language reference (docs/wave-file.md) for one
// attribute: its default ("" when its table has no default column, as for
// a lot's own attributes) and its meaning, both Markdown with the links
// reduced to their text.
type AttributeDoc struct {
	Default, Meaning string
}

// Doc returns docs/wave-file.md's description of an attribute of a block type
// ("lot", "budget"). A lot's settings shared with the defaults block are
// described by the defaults block's rows, and the keys of a limits object
// under the pseudo block type "limits". ok is false for an attribute the
// document does not describe (attrdocs_test.go checks there is none).
func Doc(blockType, attr string) (AttributeDoc, bool) {
	if d, ok := attributeDocs[blockType][attr]; ok {
		return d, true
	}
	if blockType == "lot" {
		d, ok := attributeDocs["defaults"][attr]
		return d, ok
	}
	return AttributeDoc{}, false
}

// WithDocs are attrs, each with its entry of docs (by name) as Doc: an
// agent adapter's Attributes (agent.SettingsDecoder).
func WithDocs(attrs []KindAttribute, docs map[string]AttributeDoc) []KindAttribute {
	out := append([]KindAttribute(nil), attrs...)
	for i := range out {
		out[i].Doc = docs[out[i].Name]
	}
	return out
}

// BodySchemaOf is the body schema of attrs, each optional: what an agent
// adapter's DecodeSettings reads of a kind's block.
func BodySchemaOf(attrs []KindAttribute) *hcl.BodySchema {
	schema := &hcl.BodySchema{}
	for _, a := range attrs {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: a.Name})
	}
	return schema
}
