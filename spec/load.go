package spec

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Options are the inputs of a wave file that come from outside it.
type Options struct {
	// Vars are -var name=value assignments, applied in order after VarFiles.
	Vars []string
	// VarFiles are -var-file paths (HCL or HCL JSON files of assignments),
	// applied in order after EnvVars; the CLI puts the wave's auto-loaded
	// var file (layout.AutoVarFile) first.
	VarFiles []string
	// EnvVars are variable values from the environment, by variable name
	// (the CLI reads CADENCE_VAR_<name>; spec reads no environment). They
	// have the lowest precedence after the defaults: VarFiles and Vars
	// win. A value is read as -var reads one (a string for a string or
	// untyped variable, else an HCL expression); a name the wave declares
	// no variable for is ignored, as Terraform ignores such TF_VAR_.
	EnvVars map[string]string
	// AgentKinds are the kinds an agent block may name: the kinds that have
	// an adapter (the CLI passes its agent.Registry's Kinds; spec does not
	// import the executor). Empty means DefaultAgentKinds.
	AgentKinds []string
	// AgentCommand returns the executable an agent of kind runs when its
	// block sets no command (the built-in agent's too): the CLI passes its
	// agent registry's DefaultCommand, so that each kind's adapter says its
	// own (agent.Tool.Command). Nil, or "" for a kind, means the kind's
	// name.
	AgentCommand func(kind string) string
	// AgentSettings decodes the settings of an agent of the given kind:
	// its block's body past the common attributes (Agent.Body; nil for
	// the built-in agent, which takes the kind's defaults), evaluated with
	// ctx. The CLI passes its agent registry's decoder
	// (executor/agent.Registry.DecodeSettings), so that each kind's adapter
	// reads its own attributes and spec imports none; its diagnostics join
	// the loader's. Nil leaves every Agent.Settings nil and the bodies
	// unread: for callers that only read the wave's structure.
	AgentSettings func(kind string, body hcl.Body, ctx *hcl.EvalContext) (AgentSettings, hcl.Diagnostics)
	// LookupEnv is where env() reads environment variables: internal/cli
	// passes os.LookupEnv. Nil means no variable is set (env() returns its
	// default). What env() found is recorded in Config.Env.
	LookupEnv func(name string) (string, bool)
}

// Loader parses wave files and remembers their sources so that diagnostics
// can be printed with snippets. A Loader is not safe for concurrent use.
type Loader struct {
	parser *hclparse.Parser
	native map[string][]byte
}

// NewLoader returns an empty Loader.
func NewLoader() *Loader { return &Loader{parser: hclparse.NewParser(), native: map[string][]byte{}} }

// Files returns the parsed sources by file name, for hcl.NewDiagnosticTextWriter.
// Native-syntax files are parsed again here, whole, so that diagnostics get
// their "in lot ..." context; the parse that decoded them is not kept (a big
// wave's syntax tree is most of its memory). Call it only to print
// diagnostics.
func (l *Loader) Files() map[string]*hcl.File {
	files := l.parser.Files()
	for name, src := range l.native {
		f, _ := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		if f == nil {
			f = &hcl.File{Bytes: src}
		}
		files[name] = f
	}
	return files
}

// parseHCL parses native syntax, with CRLF line ends read as LF (see
// normalizeLineEnds), and remembers the source it parsed.
func (l *Loader) parseHCL(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	src = normalizeLineEnds(src)
	l.native[filename] = src
	return parseNative(src, filename)
}

// IsJSON reports whether a wave file name uses HCL's JSON syntax (*.hcl.json,
// or any *.json).
func IsJSON(name string) bool { return strings.HasSuffix(name, ".json") }

// LoadFile reads, decodes and resolves the wave file at path.
func (l *Loader) LoadFile(path string, opts Options) (*Config, hcl.Diagnostics) {
	src, err := ReadWaveFile(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read wave file",
			Detail:   fmt.Sprintf("%s. Name a wave file, or run cadence in a folder that has a wave.hcl (cadence init writes one).", err),
		}}
	}
	return l.LoadBytes(src, path, opts)
}

// LoadBytes decodes src as the wave file named filename (which decides the
// syntax and the folder that relative paths start from). A native-syntax
// file with CRLF line ends decodes exactly like the same file with LF ones;
// its diagnostics' byte offsets then count its line ends as one byte each
// (lines and columns are the file's; see normalizeLineEnds). It is Parse
// then LoadParsed.
func (l *Loader) LoadBytes(src []byte, filename string, opts Options) (*Config, hcl.Diagnostics) {
	file, diags := l.Parse(src, filename)
	if diags.HasErrors() {
		return nil, diags
	}
	cfg, more := l.LoadParsed(file, filename, opts)
	return cfg, append(diags, more...)
}

// Parse parses src as the wave file named filename, as LoadBytes does:
// HCL's JSON syntax for a *.json name, else native syntax with CRLF line
// ends read as LF (the returned file's Bytes are then the source with LF
// ones). It remembers the source for Files. A caller that reads the
// syntax tree itself (the language server) parses once with Parse and
// decodes with LoadParsed.
func (l *Loader) Parse(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	if IsJSON(filename) {
		return l.parser.ParseJSON(src, filename)
	}
	return l.parseHCL(src, filename)
}

// LoadParsed decodes and resolves file, which l.Parse returned for the
// wave file named filename with no error diagnostics (the caller reports
// Parse's diagnostics). It reads file and never changes it, so the caller
// may keep using it. The diagnostics are the decoder's only.
func (l *Loader) LoadParsed(file *hcl.File, filename string, opts Options) (*Config, hcl.Diagnostics) {
	dir := filepath.Dir(filename)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	d := &decoder{cfg: &Config{File: filename, Dir: dir}, filename: filename}
	env := &envRecorder{lookup: opts.LookupEnv, cfg: d.cfg}
	d.ctx = &hcl.EvalContext{Variables: map[string]cty.Value{}, Functions: functions(dir, env.get, &readRecorder{cfg: d.cfg})}
	d.values.ctx = d.ctx
	d.decode(file.Body, l, opts)
	if len(d.cfg.Env) > 0 || len(d.cfg.SensitiveVars) > 0 {
		hideEvalContext(d.values.diags)
	}
	return d.cfg, d.values.diags
}

// hideEvalContext drops the expression and its evaluation context from
// diags, so that a printed diagnostic has no "with x as …" line. HCL's
// printer skips marked values, but a for expression iterates over the
// unmarked elements of a sensitive collection and puts them, unmarked, in
// the context it attaches to its diagnostics: `[for c in split("", secret)
// : c + 1]` would quote the secret a character at a time. Used when the
// wave has a sensitive value (a sensitive variable, or any env() call).
func hideEvalContext(diags hcl.Diagnostics) {
	for _, d := range diags {
		d.Expression, d.EvalContext = nil, nil
	}
}

// variable is a declared input variable.
type variable struct {
	name      string
	typ       cty.Type
	def       cty.Value
	sensitive bool
	declRange hcl.Range
}

var variableSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "type"}, {Name: "default"}, {Name: "description"}, {Name: "sensitive"},
}}

// decodeVariables evaluates variable blocks with their defaults, then the var
// files and -var assignments, and returns the var object for expressions.
func (d *decoder) decodeVariables(blocks hcl.Blocks, l *Loader, opts Options) cty.Value {
	vars := map[string]*variable{}
	var order []string
	for _, b := range blocks {
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			d.errorf(b.LabelRanges[0], "Invalid variable name", "%q is not a valid name: use letters, digits, underscores and dashes, starting with a letter.", name)
			continue
		}
		if prev, ok := vars[name]; ok {
			d.duplicate(b.DefRange, "variable", name, prev.declRange)
			continue
		}
		content, diags := b.Body.Content(variableSchema)
		d.values.diags = append(d.values.diags, diags...)
		v := &variable{name: name, typ: cty.DynamicPseudoType, declRange: b.DefRange}
		if a := content.Attributes["type"]; a != nil {
			t, diags := typeexpr.TypeConstraint(a.Expr)
			d.values.diags = append(d.values.diags, diags...)
			if !diags.HasErrors() {
				v.typ = t
			}
		}
		if a := content.Attributes["default"]; a != nil {
			val, diags := a.Expr.Value(nil)
			d.values.diags = append(d.values.diags, diags...)
			if !diags.HasErrors() {
				if cv, err := convert.Convert(val, v.typ); err != nil {
					d.errorf(a.Expr.Range(), "Invalid default value", "The default of variable %q does not match its type: %s.", name, err)
				} else {
					v.def = cv
				}
			}
		}
		if a := content.Attributes["sensitive"]; a != nil {
			val, diags := a.Expr.Value(nil)
			d.values.diags = append(d.values.diags, diags...)
			if !diags.HasErrors() {
				if bv, err := convert.Convert(val, cty.Bool); err != nil || bv.IsNull() {
					d.errorf(a.Expr.Range(), "Invalid value", "\"sensitive\" of variable %q must be true or false.", name)
				} else {
					v.sensitive = bv.True()
				}
			}
		}
		vars[name] = v
		order = append(order, name)
	}
	bad := map[string]bool{} // given a value that was refused: not also "required"
	set := func(name string, val cty.Value, rng *hcl.Range, from string) {
		v, ok := vars[name]
		if !ok {
			detail := fmt.Sprintf("%s assigns %q, but the wave file declares no variable of that name.", from, name)
			if s := Suggest(name, order); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			}
			d.values.diags = append(d.values.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable", Detail: detail, Subject: rng})
			return
		}
		cv, err := convert.Convert(val, v.typ)
		if err != nil {
			bad[name] = true
			d.values.diags = append(d.values.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for variable",
				Detail: fmt.Sprintf("%s: variable %q: %s.", from, name, err), Subject: rng})
			return
		}
		v.def = cv
	}
	envNames := make([]string, 0, len(opts.EnvVars))
	for name := range opts.EnvVars {
		envNames = append(envNames, name)
	}
	sort.Strings(envNames)
	for _, name := range envNames {
		if _, ok := vars[name]; !ok {
			continue
		}
		if val, ok := d.rawVarValue(vars[name], opts.EnvVars[name], "CADENCE_VAR_"+name, "Invalid CADENCE_VAR_ value"); ok {
			set(name, val, nil, "CADENCE_VAR_"+name)
		} else {
			bad[name] = true
		}
	}
	for _, vf := range opts.VarFiles {
		var f *hcl.File
		var diags hcl.Diagnostics
		src, err := safefile.Read(vf, MaxFileBytes)
		if err != nil {
			d.values.diags = append(d.values.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read variables file", Detail: err.Error()})
			continue
		}
		(&readRecorder{cfg: d.cfg}).varFile(vf, src)
		// A var file often holds secrets (a CI runner's), and the wave file
		// that decides what is declared may be a pull request's: its
		// diagnostics name the file and line, but are printed without a
		// snippet (a parser of its own, not the Loader's, so Files() never
		// returns its source).
		vp := hclparse.NewParser()
		if IsJSON(vf) {
			f, diags = vp.ParseJSON(src, vf)
		} else {
			f, diags = vp.ParseHCL(normalizeLineEnds(src), vf)
		}
		d.values.diags = append(d.values.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		attrs, diags := f.Body.JustAttributes()
		d.values.diags = append(d.values.diags, diags...)
		for _, a := range sortedAttrs(attrs) {
			val, diags := a.Expr.Value(nil)
			if _, isWord := hcl.AbsTraversalForExpr(a.Expr); isWord == nil && diags.HasErrors() {
				// region = eu: HCL reads a bare word as a reference, and
				// Terraform's "Variables not allowed" does not say what to
				// do. The value is not echoed (var files hold secrets).
				rng := a.Expr.Range()
				diags = hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unquoted value in a variables file",
					Detail:  fmt.Sprintf("The value of %q is a bare word, which HCL reads as a reference; a variables file holds values only: quote it, like %s = \"…\".", a.Name, a.Name),
					Subject: &rng}}
			}
			d.values.diags = append(d.values.diags, diags...)
			if diags.HasErrors() {
				bad[a.Name] = true
			} else {
				rng := a.Expr.Range()
				set(a.Name, val, &rng, "-var-file "+vf)
			}
		}
	}
	for _, kv := range opts.Vars {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			d.values.diags = append(d.values.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -var option",
				Detail: fmt.Sprintf("-var %q must look like name=value.", kv)})
			continue
		}
		val, ok := d.rawVarValue(vars[name], raw, "-var "+name, "Invalid -var value")
		if !ok {
			bad[name] = true
			continue
		}
		set(name, val, nil, "-var")
	}
	d.cfg.Variables = order
	obj := map[string]cty.Value{}
	for _, name := range order {
		v := vars[name]
		if v.def == cty.NilVal && bad[name] {
			obj[name] = cty.DynamicVal
			continue
		}
		if v.def == cty.NilVal {
			d.errorf(v.declRange, "No value for required variable",
				"Variable %q has no default; give it with -var %s=VALUE, in a -var-file or as CADENCE_VAR_%s.", name, name, name)
			obj[name] = cty.DynamicVal
			continue
		}
		if v.sensitive {
			if d.cfg.SensitiveVars == nil {
				d.cfg.SensitiveVars = map[string]bool{}
			}
			d.cfg.SensitiveVars[name] = true
			obj[name] = v.def.Mark(Sensitive)
			continue
		}
		obj[name] = v.def
	}
	return cty.ObjectVal(obj)
}

// rawVarValue reads the text value raw given to variable v (nil when the
// wave declares none) from the command line or the environment (from names
// it): a string for a string or untyped variable, else an HCL expression.
// A value that does not parse is reported with summary, and ok is false.
func (d *decoder) rawVarValue(v *variable, raw, from, summary string) (cty.Value, bool) {
	if v == nil || v.typ.Equals(cty.String) || v.typ.Equals(cty.DynamicPseudoType) {
		return cty.StringVal(raw), true
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), from, hcl.InitialPos)
	var val cty.Value
	if !diags.HasErrors() {
		val, diags = expr.Value(nil)
	}
	if diags.HasErrors() {
		// The value is not quoted: it may be a secret of the CI runner's,
		// and the wave file (which decides the type) may be a pull
		// request's.
		d.values.diags = append(d.values.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
			Detail: fmt.Sprintf("%s: the value (not shown) is not a valid %s value.", from, typeexpr.TypeString(v.typ))})
		return cty.NilVal, false
	}
	return val, true
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}

// decodeLocals evaluates every locals block's attributes in dependency order
// (a local may use variables and other locals) and returns the local object.
func (d *decoder) decodeLocals(blocks hcl.Blocks) cty.Value {
	attrs := map[string]*hcl.Attribute{}
	var order []*hcl.Attribute
	for _, b := range blocks {
		as, diags := b.Body.JustAttributes()
		d.values.diags = append(d.values.diags, diags...)
		for _, a := range sortedAttrs(as) {
			if prev, ok := attrs[a.Name]; ok {
				d.duplicate(a.NameRange, "local value", a.Name, prev.NameRange)
				continue
			}
			attrs[a.Name] = a
			order = append(order, a)
		}
	}
	vals := map[string]cty.Value{}
	state := map[string]int{} // 1 visiting, 2 done
	var eval func(a *hcl.Attribute)
	eval = func(a *hcl.Attribute) {
		switch state[a.Name] {
		case 1:
			d.errorf(a.Expr.Range(), "Cycle in local values", "Local value %q refers to itself through other locals.", a.Name)
			vals[a.Name] = cty.DynamicVal
			return
		case 2:
			return
		}
		state[a.Name] = 1
		for _, tr := range a.Expr.Variables() {
			if tr.RootName() != "local" || len(tr) < 2 {
				continue
			}
			if step, ok := tr[1].(hcl.TraverseAttr); ok {
				if dep, ok := attrs[step.Name]; ok {
					eval(dep)
				}
			}
		}
		d.ctx.Variables["local"] = cty.ObjectVal(vals)
		val, diags := a.Expr.Value(d.ctx)
		d.values.diags = append(d.values.diags, diags...)
		if diags.HasErrors() {
			val = cty.DynamicVal
		}
		if state[a.Name] != 2 {
			vals[a.Name] = val
		}
		state[a.Name] = 2
	}
	for _, a := range order {
		eval(a)
	}
	return cty.ObjectVal(vals)
}
