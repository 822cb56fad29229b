package spec

import "github.com/hashicorp/hcl/v2"

// BodyReader reads the attributes of a body the wave file leaves to another
// package (an agent block's own settings, Agent.Body, which the kind's
// adapter decodes) with the wave file's rules: the same evaluation,
// conversions, diagnostics (summary, detail, and the value's range, so the
// file, line and snippet) and sensitive-value checks as spec's own
// attributes. A method returns ok=false when the attribute is absent (nil),
// null, or wrong; the diagnostic is then recorded (Diagnostics).
type BodyReader struct {
	v values
}

// NewBodyReader returns a reader that evaluates with ctx (Agent.EvalContext;
// nil: no variables or functions). mayBeSensitive names the attributes
// whose value may derive from a sensitive value: text a plan never shows
// (a prompt). A sensitive value in any other is an error, since a plan
// shows it as it is.
func NewBodyReader(ctx *hcl.EvalContext, mayBeSensitive ...string) *BodyReader {
	r := &BodyReader{v: values{ctx: ctx, maySensitive: map[string]bool{}}}
	for _, n := range mayBeSensitive {
		r.v.maySensitive[n] = true
	}
	return r
}

// Str reads a string.
func (r *BodyReader) Str(attr *hcl.Attribute) (string, bool) { return r.v.str(attr) }

// StrList reads a list of strings (no null element).
func (r *BodyReader) StrList(attr *hcl.Attribute) ([]string, bool) { return r.v.strList(attr) }

// Whole reads a whole number of at least min.
func (r *BodyReader) Whole(attr *hcl.Attribute, min int) (int, bool) { return r.v.whole(attr, min) }

// Enum reads a string that must be one of allowed (the error suggests the
// closest).
func (r *BodyReader) Enum(attr *hcl.Attribute, allowed ...string) (string, bool) {
	return r.v.enum(attr, allowed...)
}

// Add records diagnostics found otherwise (those of hcl.Body.Content).
func (r *BodyReader) Add(diags hcl.Diagnostics) { r.v.diags = append(r.v.diags, diags...) }

// Diagnostics returns what was recorded, in order.
func (r *BodyReader) Diagnostics() hcl.Diagnostics { return r.v.diags }
