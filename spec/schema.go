package spec

import "github.com/hashicorp/hcl/v2"

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
	// order. An agent block's are those of every known kind.
	Attributes []hcl.AttributeSchema
}

// Schema returns the top-level block types of a wave file in the
// decoder's order. The root's "$schema" key (JSON syntax only) is not a
// block and is left out.
func Schema() []BlockType {
	bodies := map[string][]hcl.AttributeSchema{
		"wave":     waveSchema.Attributes,
		"defaults": defaultsSchema.Attributes,
		"agent":    agentAttributes(),
		"repo":     repoSchema.Attributes,
		"lot":      lotSchema.Attributes,
		"variable": variableSchema.Attributes,
		"locals":   nil, // any name: each attribute is a local value
	}
	var out []BlockType
	for _, b := range rootSchema.Blocks {
		out = append(out, BlockType{Type: b.Type, Labels: append([]string(nil), b.LabelNames...), Attributes: append([]hcl.AttributeSchema(nil), bodies[b.Type]...)})
	}
	return out
}

// agentAttributes are the attributes of an agent block of any known kind:
// agentCommon, then each kind's in DefaultAgentKinds order, each name once.
func agentAttributes() []hcl.AttributeSchema {
	attrs := append([]hcl.AttributeSchema(nil), agentCommon...)
	seen := map[string]bool{}
	for _, a := range attrs {
		seen[a.Name] = true
	}
	for _, kind := range DefaultAgentKinds {
		for _, a := range agentKindAttrs[kind] {
			if !seen[a.Name] {
				seen[a.Name] = true
				attrs = append(attrs, a)
			}
		}
	}
	return attrs
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
