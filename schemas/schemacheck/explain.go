package schemacheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Check is Validate for a document an agent wrote: its error says each
// violation in the document's own terms, "; " between them, the field as
// a slash-separated path from the document's top ("findings/0/severity"):
//
//	status "finished" is not one of "done", "partial", "blocked"
//	unknown field "verdict"
//	missing field "summary"
//	already_done "yes" is a string, not a boolean
//
// and "<path>: <the validator's words>" for any other keyword. A document
// that is not JSON is "not JSON: ..."; an unknown schema "no schema ...".
func Check(name string, data []byte) error {
	doc, err := validate(name, data)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var out []string
	for _, l := range leaves(ve) {
		out = append(out, explain(l, doc)...)
	}
	if len(out) == 0 {
		return err
	}
	return errors.New(strings.Join(out, "; "))
}

// leaves returns the violations under e that have no causes of their own.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

var printer = message.NewPrinter(language.English)

// explain words one violation of doc: one line per field it names.
func explain(e *jsonschema.ValidationError, doc any) []string {
	path := strings.Join(e.InstanceLocation, "/")
	field := func(name string) string {
		if path == "" {
			return name
		}
		return path + "/" + name
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		out := make([]string, len(k.Properties))
		for i, p := range k.Properties {
			out[i] = fmt.Sprintf("unknown field %q", field(p))
		}
		return out
	case *kind.Required:
		out := make([]string, len(k.Missing))
		for i, p := range k.Missing {
			out[i] = fmt.Sprintf("missing field %q", field(p))
		}
		return out
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonText(w)
		}
		return []string{fmt.Sprintf("%s %s is not one of %s", path, jsonText(k.Got), strings.Join(want, ", "))}
	case *kind.Type:
		return []string{fmt.Sprintf("%s %s is a%s %s, not a%s %s", path, jsonText(at(doc, e.InstanceLocation)),
			article(k.Got), k.Got, article(k.Want[0]), strings.Join(k.Want, " or "))}
	}
	if path == "" {
		return []string{e.ErrorKind.LocalizedString(printer)}
	}
	return []string{path + ": " + e.ErrorKind.LocalizedString(printer)}
}

// at returns the value of doc at path (nil when there is none).
func at(doc any, path []string) any {
	for _, p := range path {
		switch x := doc.(type) {
		case map[string]any:
			doc = x[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			doc = x[i]
		default:
			return nil
		}
	}
	return doc
}

// jsonText is v as JSON, cut to 80 bytes.
func jsonText(v any) string {
	s := fmt.Sprintf("%v", v)
	if b, err := json.Marshal(v); err == nil {
		s = string(b)
	}
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// article is "n" before a type name that starts with a vowel ("an
// integer", "an array", "an object"), else "".
func article(typ string) string {
	if typ != "" && strings.ContainsRune("aeiou", rune(typ[0])) {
		return "n"
	}
	return ""
}
