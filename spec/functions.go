package spec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Functions returns the HCL functions available in a wave file whose folder is
// dir: file, templatefile and env, plus go-cty's string and collection
// functions (trimspace, join, format, upper, lower and a few more). env()
// reads variables through lookup (nil: none is set); spec never reads the
// process environment itself.
func Functions(dir string, lookup func(name string) (string, bool)) map[string]function.Function {
	return functions(dir, lookup, nil)
}

// functions is Functions with the files read recorded in rec (nil: not).
func functions(dir string, lookup func(name string) (string, bool), rec *readRecorder) map[string]function.Function {
	fns := map[string]function.Function{
		"file":         fileFunc(dir, rec),
		"templatefile": templateFileFunc(dir, lookup, rec),
		"env":          envFunc(lookup),
		"trimspace":    stdlib.TrimSpaceFunc,
		"join":         stdlib.JoinFunc,
		"format":       stdlib.FormatFunc,
		"upper":        stdlib.UpperFunc,
		"lower":        stdlib.LowerFunc,
		"replace":      stdlib.ReplaceFunc,
		"split":        stdlib.SplitFunc,
		"concat":       stdlib.ConcatFunc,
		"length":       stdlib.LengthFunc,
		"trim":         stdlib.TrimFunc,
		"trimprefix":   stdlib.TrimPrefixFunc,
		"trimsuffix":   stdlib.TrimSuffixFunc,
		"coalesce":     stdlib.CoalesceFunc,
		"max":          stdlib.MaxFunc,
		"min":          stdlib.MinFunc,
	}
	return fns
}

// pathParam is the path parameter of file() and templatefile(). It takes
// a marked value itself so that, when the path is sensitive, an error does
// not quote it (see hideSensitivePath); the result carries its marks.
var pathParam = function.Parameter{Name: "path", Type: cty.String, AllowMarked: true}

// hideSensitivePath replaces err, which may quote the path or the file,
// when the path is sensitive.
func hideSensitivePath(err error, marks cty.ValueMarks) error {
	if _, ok := marks[Sensitive]; ok && err != nil {
		return fmt.Errorf("cannot read the file, whose path is sensitive, so neither it nor the reason is shown (file() and templatefile() read only regular files of at most 1 MiB inside the wave file's folder tree or its git work tree)")
	}
	return err
}

func fileFunc(dir string, rec *readRecorder) function.Function {
	return function.New(&function.Spec{
		Description: "Reads a text file relative to the wave file's folder.",
		Params:      []function.Parameter{pathParam},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			path, marks := args[0].Unmark()
			s, err := readRelative(dir, path.AsString(), rec)
			if err != nil {
				return cty.NilVal, hideSensitivePath(err, marks)
			}
			return cty.StringVal(s).WithMarks(marks), nil
		},
	})
}

func templateFileFunc(dir string, lookup func(string) (string, bool), rec *readRecorder) function.Function {
	return function.New(&function.Spec{
		Description: "Renders a template file relative to the wave file's folder with the given variables.",
		Params: []function.Parameter{
			pathParam,
			{Name: "vars", Type: cty.DynamicPseudoType, AllowMarked: true},
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			path, marks := args[0].Unmark()
			// Sensitive vars: the template sees them marked (a file()
			// inside it hides a sensitive path), its result is sensitive,
			// and an error does not quote them.
			_, varMarks := args[1].UnmarkDeep()
			v, err := renderTemplate(dir, lookup, path.AsString(), args[1], rec)
			if _, ok := varMarks[Sensitive]; ok && err != nil && !args[0].IsMarked() {
				return cty.NilVal, fmt.Errorf("template %s failed with sensitive variables, so the reason is not shown", path.AsString())
			}
			if err != nil {
				return cty.NilVal, hideSensitivePath(err, marks)
			}
			return v.WithMarks(marks, varMarks), nil
		},
	})
}

// renderTemplate renders the template file name with vars for templatefile.
func renderTemplate(dir string, lookup func(string) (string, bool), name string, vars cty.Value, rec *readRecorder) (cty.Value, error) {
	src, err := readRelative(dir, name, rec)
	if err != nil {
		return cty.NilVal, err
	}
	vars, marks := vars.Unmark()
	if !vars.Type().IsObjectType() && !vars.Type().IsMapType() {
		return cty.NilVal, fmt.Errorf("the second argument must be an object of variables")
	}
	expr, diags := hclsyntax.ParseTemplate([]byte(src), name, hcl.Pos{Line: 1, Column: 1, Byte: 0})
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	values := map[string]cty.Value{}
	for k, v := range vars.AsValueMap() {
		values[k] = v.WithMarks(marks) // a sensitive object: each of its values is
	}
	fns := functions(dir, lookup, rec)
	// As in Terraform, a template cannot call templatefile: a template
	// rendering itself would recurse until the stack overflows.
	fns["templatefile"] = function.New(&function.Spec{
		Params: []function.Parameter{pathParam, {Name: "vars", Type: cty.DynamicPseudoType, AllowMarked: true}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			return cty.NilVal, fmt.Errorf("templatefile cannot be called from inside a template")
		},
	})
	ctx := &hcl.EvalContext{Variables: values, Functions: fns}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	if v.IsNull() || !v.Type().Equals(cty.String) {
		return cty.NilVal, fmt.Errorf("template %s did not render to a string", name)
	}
	return v, nil
}

// EnvValue is what env() found for one variable. The value is sensitive:
// a file (a saved plan) records a digest of it, never Value, which is left out
// of JSON.
type EnvValue struct {
	// Value is the variable's value; empty when it is unset.
	Value string `json:"-"`
	// Set is false when the variable is not in the environment (env()
	// returned its default).
	Set bool `json:"set"`
}

// envRecorder looks variables up for env() and records each answer in
// Config.Env.
type envRecorder struct {
	lookup func(string) (string, bool)
	cfg    *Config
}

func (r *envRecorder) get(name string) (string, bool) {
	var v string
	var ok bool
	if r.lookup != nil {
		v, ok = r.lookup(name)
	}
	if r.cfg.Env == nil {
		r.cfg.Env = map[string]EnvValue{}
	}
	r.cfg.Env[name] = EnvValue{Value: v, Set: ok}
	return v, ok
}

func envFunc(lookup func(string) (string, bool)) function.Function {
	return function.New(&function.Spec{
		Description: "Returns an environment variable, or the default (second argument, optional) when it is unset; the value is sensitive.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		VarParam:    &function.Parameter{Name: "default", Type: cty.String},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if len(args) > 2 {
				return cty.NilVal, fmt.Errorf("env takes a name and at most one default")
			}
			if lookup != nil {
				if v, ok := lookup(args[0].AsString()); ok {
					return cty.StringVal(v).Mark(Sensitive), nil
				}
			}
			if len(args) == 2 {
				return args[1].Mark(Sensitive), nil
			}
			return cty.StringVal("").Mark(Sensitive), nil
		},
	})
}
