package spec

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// agentCommon are the attributes of an agent block that spec reads,
// whatever its kind: kind, command, sandbox (whether sessions run in the
// agent CLI's own OS sandbox where it has one) and fallback_model (every
// session's fallback model; a lot that sets none takes its agent's). The
// rest of the block is the kind's own settings, which the kind's adapter
// decodes (Options.AgentSettings), as Terraform leaves a provider's block
// to the provider.
var agentCommon = []hcl.AttributeSchema{{Name: "kind"}, {Name: "command"}, {Name: "sandbox"}, {Name: "fallback_model"}}

// AgentCommon returns the names of the attributes every agent block takes,
// whatever its kind (its adapter's own come on top).
func AgentCommon() []string {
	out := make([]string, len(agentCommon))
	for i, a := range agentCommon {
		out[i] = a.Name
	}
	return out
}

func (d *decoder) decodeAgent(b *hcl.Block) {
	name := b.Labels[0]
	if !hclsyntax.ValidIdentifier(name) {
		d.errorf(b.LabelRanges[0], "Invalid agent name", "%q is not a valid name: use letters, digits, underscores and dashes, starting with a letter or underscore.", name)
		return
	}
	a := d.cfg.agentsByName[name]
	switch {
	case a != nil && !a.Builtin:
		d.duplicate(b.DefRange, "agent", name, a.DeclRange)
		return
	case a == nil:
		a = d.defaultAgent(AgentKindClaude)
		a.Name = name
		d.cfg.Agents = append(d.cfg.Agents, a)
		d.cfg.agentsByName[name] = a
	}
	a.Builtin, a.DeclRange = false, b.DefRange
	kind, ok := d.agentKind(b)
	if !ok {
		return
	}
	if kind != a.Kind {
		// Another kind starts from that kind's defaults, keeping the name.
		*a = *d.defaultAgent(kind)
		a.Name, a.Builtin, a.DeclRange = name, false, b.DefRange
	}
	c, remain, diags := b.Body.PartialContent(&hcl.BodySchema{Attributes: agentCommon})
	d.values.diags = append(d.values.diags, diags...)
	if attr := c.Attributes["kind"]; attr != nil {
		a.KindRange = attr.Expr.Range()
	}
	if s, ok := d.str(c.Attributes["command"]); ok {
		a.Command = s
	}
	if on, ok := d.boolean(c.Attributes["sandbox"]); ok {
		a.NoSandbox = !on
	}
	if s, ok := d.fallbackModel(c.Attributes["fallback_model"]); ok {
		a.FallbackModel = s
	}
	a.Body, a.EvalContext = remain, d.ctx
	d.agentSettings(a)
	// once every attribute is read: the common ones by spec, the kind's by
	// their marks (its adapter refuses a sensitive value where it shows one)
	a.Sensitive = d.fields(c.Attributes, nil).with(markedAttrs(remain, d.ctx))
}

// defaultAgent is DefaultAgent of kind with the kind's default command
// (Options.AgentCommand), named like the kind (BuiltinAgent for the
// default kind).
func (d *decoder) defaultAgent(kind string) *Agent {
	cmd := ""
	if d.agentCommand != nil {
		cmd = d.agentCommand(kind)
	}
	return DefaultAgent(kind, cmd)
}

// agentSettings has the caller's adapter decode a's own settings from
// a.Body (nil for the built-in agent: the kind's defaults), when the caller
// passed a decoder (Options.AgentSettings).
func (d *decoder) agentSettings(a *Agent) {
	if d.settingsDecoder == nil {
		return
	}
	s, diags := d.settingsDecoder(a.Kind, a.Body, a.EvalContext)
	suggestCommon(diags)
	d.values.diags = append(d.values.diags, diags...)
	a.Settings = s
}

// unknownArg matches the detail of HCL's diagnostic for an attribute a
// body's schema does not have: native syntax, then JSON.
var unknownArg = regexp.MustCompile(`^(?:An argument named|No argument or block type is named) "([^"]+)"`)

// suggestCommon adds "Did you mean" to the adapter's diagnostics of an
// unknown attribute that is a misspelt common one (sandbox, command, …):
// the adapter decodes the remaining body with its own schema only, so HCL
// suggests among its attributes alone (docs/wave-file.md, Errors: unknown
// attributes come with the likely name).
func suggestCommon(diags hcl.Diagnostics) {
	for _, diag := range diags {
		if strings.Contains(diag.Detail, "Did you mean") {
			continue
		}
		m := unknownArg.FindStringSubmatch(diag.Detail)
		if m == nil {
			continue
		}
		if s := Suggest(m[1], AgentCommon()); s != "" {
			diag.Detail += fmt.Sprintf(" Did you mean %q?", s)
		}
	}
}

// markedAttrs returns the names of body's attributes whose values derive
// from a sensitive value, evaluated with ctx; problems are left to whoever
// decodes body.
func markedAttrs(body hcl.Body, ctx *hcl.EvalContext) Fields {
	attrs, _ := body.JustAttributes()
	var f Fields
	for name, attr := range attrs {
		val, _ := attr.Expr.Value(ctx)
		if _, marks := val.UnmarkDeep(); hasSensitive(marks) {
			if f == nil {
				f = Fields{}
			}
			f[name] = true
		}
	}
	return f
}

// agentKind reads an agent block's kind: AgentKindClaude when it sets none.
// A kind with no adapter (not in d.agentKinds) is an error on its value,
// with the closest known kind as a suggestion; ok is false then, and the
// block's other attributes are not read (they would be judged against the
// wrong kind).
func (d *decoder) agentKind(b *hcl.Block) (string, bool) {
	pc, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: agentCommon[:1]})
	attr := pc.Attributes["kind"]
	if attr == nil {
		return AgentKindClaude, true
	}
	kind, ok := d.str(attr)
	if !ok {
		return "", false
	}
	for _, k := range d.agentKinds {
		if k == kind {
			return kind, true
		}
	}
	detail := fmt.Sprintf("No agent adapter runs kind %q; the kinds are %s.", kind, quoteList(d.agentKinds))
	if s := Suggest(kind, d.agentKinds); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	}
	d.invalid(attr, "Unknown agent kind", "%s", detail)
	return "", false
}

func hasSensitive(marks cty.ValueMarks) bool {
	_, ok := marks[Sensitive]
	return ok
}
