package spec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// sensitiveMark is the type of the Sensitive mark.
type sensitiveMark string

// Sensitive is the cty mark of a sensitive value, as Terraform's
// internal/lang/marks.Sensitive: every value env() returns and the value of
// a variable declared with sensitive = true carry it, and cty carries it to
// everything computed from them (interpolation, functions, locals).
const Sensitive = sensitiveMark("sensitive")

// Redacted is what a plan, in every format, and show print in place of a
// sensitive value (Terraform's wording).
const Redacted = "(sensitive)"

// Fields are the attributes of one block (a lot, a repo) whose values
// derive from a sensitive value, by attribute name ("title", "brief",
// "run", "model", "test", "path", ...). The zero value holds none.
type Fields map[string]bool

// EnvNames is the pseudo-attribute of Fields that says the names of a
// block's env are sensitive too (env's value is a sensitive map, or one
// of its keys is sensitive): a plan shows env as Redacted, not its names.
// Fields "env" alone says only values are, which a plan never shows.
const EnvNames = "env names"

// Has reports whether the attribute name holds a sensitive value.
func (f Fields) Has(name string) bool { return f[name] }

// Show returns value, or Redacted when the attribute name is sensitive:
// what a plan prints for it.
func (f Fields) Show(name, value string) string {
	if f[name] {
		return Redacted
	}
	return value
}

// unmark returns val without marks, recording attr as sensitive when val or
// anything in it carried the Sensitive mark.
func (v *values) unmark(attr *hcl.Attribute, val cty.Value) cty.Value {
	if !val.ContainsMarked() {
		return val
	}
	if val.HasMark(Sensitive) {
		if v.sensitiveWhole == nil {
			v.sensitiveWhole = map[*hcl.Attribute]bool{}
		}
		v.sensitiveWhole[attr] = true
	}
	val, marks := val.UnmarkDeep()
	if _, ok := marks[Sensitive]; ok {
		if v.sensitive == nil {
			v.sensitive = map[*hcl.Attribute]bool{}
		}
		v.sensitive[attr] = true
		if !mayBeSensitive[attr.Name] && !v.maySensitive[attr.Name] {
			v.errorf(attr.Expr.Range(), "Sensitive value not allowed",
				"%q cannot be derived from a sensitive value (env(), or a variable declared sensitive = true): a plan shows it, and a number, a switch or a choice cannot be shown as (sensitive) without hiding what the plan is for. Give it a value that is not sensitive.", attr.Name)
		}
	}
	return val
}

// mayBeSensitive are the attributes whose value may derive from a
// sensitive one: text a plan never shows (brief, run), shows as (sensitive) (title, model, review_model,
// a repo's path, base, test and setup, an agent's command), or paths it does not
// show (templates, worktrees, changelog); env, whose values a plan
// never shows (names only, or (sensitive) when the names are), and
// path_prepend, shown as (sensitive); and references (repo, agent,
// also, depends_on), whose values are blocks. Any other attribute (a
// budget, an estimate, fix_passes, parallel) is shown as it is, so a sensitive value there is an error: otherwise a wave file
// could print a secret a character at a time as numbers.
var mayBeSensitive = map[string]bool{
	"title": true, "brief": true, "run": true,
	"model": true, "review_model": true, "path": true, "base": true, "test": true, "setup": true, "command": true,
	"templates": true, "worktrees": true, "changelog": true,
	"repo": true, "agent": true, "also": true, "depends_on": true,
	// A plan shows env's names only, and path_prepend as (sensitive).
	"env": true, "path_prepend": true,
	// An executor's engine URL and credentials path (plan shows (sensitive)).
	"url": true, "credentials": true,
}

// fields returns the names of the attributes in attrs whose values were
// sensitive, plus those of inherited (the defaults block's) that attrs does
// not set; nil when there are none.
func (v *values) fields(attrs hcl.Attributes, inherited Fields) Fields {
	var f Fields
	add := func(name string) {
		if f == nil {
			f = Fields{}
		}
		f[name] = true
	}
	for name, a := range attrs {
		if v.sensitive[a] {
			add(name)
		}
	}
	for name := range inherited {
		if _, own := attrs[name]; !own {
			add(name)
		}
	}
	return f
}
