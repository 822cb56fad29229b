package spec

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// values evaluates attribute expressions and converts them to Go values,
// collecting every problem as a diagnostic. A method returns ok=false when
// the attribute is absent, null, or wrong (the diagnostic is then recorded).
type values struct {
	ctx   *hcl.EvalContext
	diags hcl.Diagnostics
	// sensitive are the attributes whose values carried the Sensitive mark
	// (see unmark); their Go values are the real ones.
	sensitive map[*hcl.Attribute]bool
	// sensitiveWhole are those whose value itself, not only elements of
	// it, carried the mark: a sensitive map, or one with a sensitive key.
	sensitiveWhole map[*hcl.Attribute]bool
	// maySensitive are attribute names, beyond mayBeSensitive, whose
	// value may derive from a sensitive one (a BodyReader's).
	maySensitive map[string]bool
}

func (v *values) errorf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	v.diags = append(v.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  &r,
	})
}

func (v *values) eval(attr *hcl.Attribute, want cty.Type, what string) (cty.Value, bool) {
	if attr == nil {
		return cty.NilVal, false
	}
	val, diags := attr.Expr.Value(v.ctx)
	v.diags = append(v.diags, diags...)
	val = v.unmark(attr, val)
	if diags.HasErrors() || val.IsNull() {
		return cty.NilVal, false
	}
	if !val.IsWhollyKnown() {
		// Only values that failed earlier (a missing variable, a broken
		// local) are unknown; their error is already reported.
		return cty.NilVal, false
	}
	if want == cty.DynamicPseudoType {
		return val, true
	}
	out, err := convert.Convert(val, want)
	if err != nil {
		v.errorf(attr.Expr.Range(), "Incorrect attribute value type",
			"Inappropriate value for attribute %q: %s required, but got %s.", attr.Name, what, friendlyType(val.Type()))
		return cty.NilVal, false
	}
	if out.IsNull() {
		return cty.NilVal, false
	}
	return out, true
}

// invalid reports attr's value as invalid; the detail, which quotes the
// value, is replaced by one that does not when the value is sensitive.
func (v *values) invalid(attr *hcl.Attribute, summary, format string, args ...any) {
	if v.sensitive[attr] {
		v.errorf(attr.Expr.Range(), summary, "The value of %q is not valid here; it is sensitive, so it is not shown.", attr.Name)
		return
	}
	v.errorf(attr.Expr.Range(), summary, format, args...)
}

func friendlyType(t cty.Type) string {
	switch {
	case t == cty.String:
		return "a string"
	case t == cty.Number:
		return "a number"
	case t == cty.Bool:
		return "a bool"
	case t.IsTupleType(), t.IsListType(), t.IsSetType():
		return "a list"
	case t.IsObjectType(), t.IsMapType():
		return "an object"
	}
	return t.FriendlyName()
}

// strWritten reads an optional string attribute once and also says whether
// it was written at all: absent and null are not written; a value that fails
// to evaluate is written (its error is already reported).
func (v *values) strWritten(attr *hcl.Attribute) (s string, ok, written bool) {
	if attr == nil {
		return "", false, false
	}
	n := len(v.diags)
	s, ok = v.str(attr)
	if !ok && len(v.diags) == n {
		// An unknown value (it depends on a variable with no value,
		// whose error is reported) is written: Terraform evaluates it as
		// unknown, and what needs it is not reported missing.
		if val, _ := attr.Expr.Value(v.ctx); !val.IsWhollyKnown() {
			return "", false, true
		}
	}
	return s, ok, ok || len(v.diags) > n
}

func (v *values) str(attr *hcl.Attribute) (string, bool) {
	val, ok := v.eval(attr, cty.String, "a string")
	if !ok {
		return "", false
	}
	return val.AsString(), true
}

func (v *values) strList(attr *hcl.Attribute) ([]string, bool) {
	val, ok := v.eval(attr, cty.List(cty.String), "a list of strings")
	if !ok {
		return nil, false
	}
	var out []string
	for _, e := range val.AsValueSlice() {
		if e.IsNull() {
			v.errorf(attr.Expr.Range(), "Invalid list element", "The list %q may not contain null.", attr.Name)
			return nil, false
		}
		out = append(out, e.AsString())
	}
	return out, true
}

func (v *values) boolean(attr *hcl.Attribute) (bool, bool) {
	val, ok := v.eval(attr, cty.Bool, "a bool")
	if !ok {
		return false, false
	}
	return val.True(), true
}

// whole reads a whole number of at least min.
func (v *values) whole(attr *hcl.Attribute, min int) (int, bool) {
	val, ok := v.eval(attr, cty.Number, "a number")
	if !ok {
		return 0, false
	}
	bf := val.AsBigFloat()
	i, acc := bf.Int64()
	if !bf.IsInt() {
		v.errorf(attr.Expr.Range(), "Invalid value", "%q must be a whole number.", attr.Name)
		return 0, false
	}
	if acc != 0 || i >= 1<<31 {
		v.errorf(attr.Expr.Range(), "Invalid value", "%q is too large: at most %d.", attr.Name, 1<<31-1)
		return 0, false
	}
	if i < int64(min) {
		v.invalid(attr, "Invalid value", "%q must be at least %d; got %d.", attr.Name, min, i)
		return 0, false
	}
	return int(i), true
}

// numberOrString evaluates attr, a number or a string, as text (a number
// in full decimal); any other type is an error whose message says what is
// required (want, e.g. "a size is required (…)").
func (v *values) numberOrString(attr *hcl.Attribute, want string) (string, bool) {
	val, ok := v.eval(attr, cty.DynamicPseudoType, "")
	if !ok {
		return "", false
	}
	switch val.Type() {
	case cty.Number:
		return val.AsBigFloat().Text('f', -1), true
	case cty.String:
		return val.AsString(), true
	}
	v.errorf(attr.Expr.Range(), "Incorrect attribute value type",
		"Inappropriate value for attribute %q: %s, but got %s.", attr.Name, want, friendlyType(val.Type()))
	return "", false
}

// tokens reads a token count written as a number or as a string like "1.5M".
func (v *values) tokens(attr *hcl.Attribute) (Tokens, bool) {
	s, ok := v.numberOrString(attr, "a token count is required (1500000, \"1.5M\" or \"800k\")")
	if !ok {
		return 0, false
	}
	t, err := ParseTokens(s)
	if err != nil {
		v.invalid(attr, "Invalid token count", "%s.", capitalize(err.Error()))
		return 0, false
	}
	return t, true
}

// size reads a size in bytes (ParseBytes), from a number or a string, of
// at least least bytes.
func (v *values) size(attr *hcl.Attribute, least Bytes) (Bytes, bool) {
	s, ok := v.numberOrString(attr, "a size is required (\"16MiB\", \"512KiB\" or a number of bytes)")
	if !ok {
		return 0, false
	}
	b, err := ParseBytes(s)
	if err != nil {
		v.invalid(attr, "Invalid size", "%s.", capitalize(err.Error()))
		return 0, false
	}
	if b < least {
		v.errorf(attr.Expr.Range(), "Invalid size", "%q must be at least %s (it is %s).", attr.Name, least, b)
		return 0, false
	}
	return b, true
}

// usd reads a dollar amount exactly, from a number or a string.
func (v *values) usd(attr *hcl.Attribute) (USD, bool) {
	val, ok := v.eval(attr, cty.DynamicPseudoType, "")
	if !ok {
		return 0, false
	}
	var u USD
	var err error
	switch val.Type() {
	case cty.Number:
		u, err = USDFromFloat(val.AsBigFloat())
	case cty.String:
		u, err = ParseUSD(val.AsString())
	default:
		err = fmt.Errorf("a dollar amount is required, like 40 or 12.50, but got %s", friendlyType(val.Type()))
	}
	if err != nil {
		v.invalid(attr, "Invalid dollar amount", "%s.", capitalize(err.Error()))
		return 0, false
	}
	return u, true
}

func (v *values) duration(attr *hcl.Attribute) (time.Duration, bool) {
	s, ok := v.str(attr)
	if !ok {
		return 0, false
	}
	d, err := ParseDuration(s)
	if err != nil {
		v.invalid(attr, "Invalid duration", "%s.", capitalize(err.Error()))
		return 0, false
	}
	if d == 0 {
		v.errorf(attr.Expr.Range(), "Invalid duration", "%q must be longer than zero.", attr.Name)
		return 0, false
	}
	return d, true
}

// enum reads a string that must be one of allowed.
func (v *values) enum(attr *hcl.Attribute, allowed ...string) (string, bool) {
	s, ok := v.str(attr)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	detail := fmt.Sprintf("%q must be one of %s; got %q.", attr.Name, quoteList(allowed), s)
	if sug := Suggest(s, allowed); sug != "" {
		detail += fmt.Sprintf(" Did you mean %q?", sug)
	}
	v.invalid(attr, "Invalid value", "%s", detail)
	return "", false
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
