package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Functions returns the HCL functions available in a wave file whose folder is
// dir: file, templatefile and env, plus go-cty's string and collection
// functions (trimspace, join, format, upper, lower and a few more).
func Functions(dir string) map[string]function.Function {
	fns := map[string]function.Function{
		"file":         fileFunc(dir),
		"templatefile": templateFileFunc(dir),
		"env":          envFunc,
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

func readRelative(dir, name string) (string, error) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("no file %s (paths are relative to the wave file's folder)", p)
		}
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%s is not UTF-8 text", p)
	}
	return string(b), nil
}

func fileFunc(dir string) function.Function {
	return function.New(&function.Spec{
		Description: "Reads a text file relative to the wave file's folder.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, err := readRelative(dir, args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(s), nil
		},
	})
}

func templateFileFunc(dir string) function.Function {
	return function.New(&function.Spec{
		Description: "Renders a template file relative to the wave file's folder with the given variables.",
		Params: []function.Parameter{
			{Name: "path", Type: cty.String},
			{Name: "vars", Type: cty.DynamicPseudoType},
		},
		Type: function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			src, err := readRelative(dir, name)
			if err != nil {
				return cty.NilVal, err
			}
			vars := args[1]
			if !vars.Type().IsObjectType() && !vars.Type().IsMapType() {
				return cty.NilVal, fmt.Errorf("the second argument must be an object of variables")
			}
			expr, diags := hclsyntax.ParseTemplate([]byte(src), name, hcl.Pos{Line: 1, Column: 1, Byte: 0})
			if diags.HasErrors() {
				return cty.NilVal, diags
			}
			ctx := &hcl.EvalContext{Variables: vars.AsValueMap(), Functions: Functions(dir)}
			v, diags := expr.Value(ctx)
			if diags.HasErrors() {
				return cty.NilVal, diags
			}
			if v.IsNull() || !v.Type().Equals(cty.String) {
				return cty.NilVal, fmt.Errorf("template %s did not render to a string", name)
			}
			return v, nil
		},
	})
}

var envFunc = function.New(&function.Spec{
	Description: "Returns an environment variable, or the default (second argument, optional) when it is unset.",
	Params:      []function.Parameter{{Name: "name", Type: cty.String}},
	VarParam:    &function.Parameter{Name: "default", Type: cty.String},
	Type:        function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if len(args) > 2 {
			return cty.NilVal, fmt.Errorf("env takes a name and at most one default")
		}
		if v, ok := os.LookupEnv(args[0].AsString()); ok {
			return cty.StringVal(v), nil
		}
		if len(args) == 2 {
			return args[1], nil
		}
		return cty.StringVal(""), nil
	},
})
