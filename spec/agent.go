package spec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// agentCommon are the attributes of an agent block of every kind.
var agentCommon = []hcl.AttributeSchema{{Name: "kind"}, {Name: "command"}, {Name: "sandbox"}}

// agentKindAttrs are the attributes each kind adds to agentCommon, and
// decodeKind reads them. A kind that is not listed takes the common
// attributes only; adding a kind's settings means an entry here, a case in
// decodeKind, and a struct in Agent (see the executor/agent package doc).
var agentKindAttrs = map[string][]hcl.AttributeSchema{
	AgentKindClaude: {
		{Name: "permission_mode"}, {Name: "allowed_tools"}, {Name: "disallowed_tools"},
		{Name: "append_system_prompt"}, {Name: "max_retries"}, {Name: "fallback_model"},
	},
}

// agentSchema is the body schema of an agent block of the given kind.
func agentSchema(kind string) *hcl.BodySchema {
	return &hcl.BodySchema{Attributes: append(append([]hcl.AttributeSchema{}, agentCommon...), agentKindAttrs[kind]...)}
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
		a = builtinClaude()
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
		*a = *DefaultAgent(kind)
		a.Name, a.Builtin, a.DeclRange = name, false, b.DefRange
	}
	c, diags := b.Body.Content(agentSchema(kind))
	d.values.diags = append(d.values.diags, diags...)
	if s, ok := d.str(c.Attributes["command"]); ok {
		a.Command = s
	}
	if on, ok := d.boolean(c.Attributes["sandbox"]); ok {
		a.NoSandbox = !on
	}
	d.decodeKind(a, c.Attributes)
	a.Sensitive = d.fields(c.Attributes, nil) // once every attribute is read
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

// decodeKind reads the attributes of a's kind (agentKindAttrs).
func (d *decoder) decodeKind(a *Agent, attrs hcl.Attributes) {
	switch a.Kind {
	case AgentKindClaude:
		c := &a.Claude
		if s, ok := d.enum(attrs["permission_mode"], PermissionModes...); ok {
			c.PermissionMode = s
		}
		if l, ok := d.strList(attrs["allowed_tools"]); ok {
			c.AllowedTools = l
		}
		if l, ok := d.strList(attrs["disallowed_tools"]); ok {
			c.DisallowedTools = l
		}
		if s, ok := d.str(attrs["append_system_prompt"]); ok {
			c.AppendSystemPrompt = s
		}
		if n, ok := d.whole(attrs["max_retries"], 0); ok {
			c.MaxRetries = n
		}
		if s, ok := d.fallbackModel(attrs["fallback_model"]); ok {
			c.FallbackModel = s
		}
	}
}
