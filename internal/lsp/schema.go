package lsp

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl-lang/lang"
	"github.com/hashicorp/hcl-lang/schema"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Reference scopes: what a lot., repo., agent., var. or local. reference
// may target, for completion and for matching origins to targets.
const (
	scopeLot      lang.ScopeId = "lot"
	scopeRepo     lang.ScopeId = "repo"
	scopeAgent    lang.ScopeId = "agent"
	scopeVariable lang.ScopeId = "variable"
	scopeLocal    lang.ScopeId = "local"
)

// Models are the model names completion offers for model attributes: the
// aliases Claude Code takes; any other string is accepted as validate
// accepts it.
var Models = []string{"sonnet", "opus", "haiku"}

var (
	anyString = schema.AnyExpression{OfType: cty.String}
	anyNumber = schema.AnyExpression{OfType: cty.Number}
	anyBool   = schema.AnyExpression{OfType: cty.Bool}
	// tokens are token counts and sizes: 2000000 or "2M".
	tokens  = schema.OneOf{anyNumber, anyString}
	strList = schema.List{Elem: anyString}
	strMap  = schema.Map{Elem: anyString}
)

func enum(values ...string) schema.OneOf {
	var o schema.OneOf
	for _, v := range values {
		o = append(o, schema.LiteralValue{Value: cty.StringVal(v)})
	}
	return append(o, anyString)
}

func refs(scope lang.ScopeId) schema.List {
	return schema.List{Elem: schema.Reference{OfScopeId: scope}}
}

// constraints are the value constraints of the wave language's
// attributes, by block type ("" for an attribute of the same name in any
// block) and attribute name. TestSchemaCoversSpec checks every attribute
// spec accepts has one.
func constraints(agentKinds []string) map[string]map[string]schema.Constraint {
	limits := schema.Object{Attributes: schema.ObjectAttributes{}}
	for _, n := range spec.LimitNames {
		c := schema.Constraint(anyString)
		if n == "processes" || n == "open_files" {
			c = anyNumber
		}
		d, _ := spec.Doc("limits", n)
		limits.Attributes[n] = &schema.AttributeSchema{IsOptional: true, Constraint: c, Description: lang.Markdown(d.Meaning)}
	}
	model := enum(Models...)
	return map[string]map[string]schema.Constraint{
		"": {
			"budget": tokens, "log_limit": anyString, "env": strMap, "path_prepend": strList, "limits": limits,
			"agent": schema.Reference{OfScopeId: scopeAgent}, "review_agent": schema.Reference{OfScopeId: scopeAgent}, "model": model, "review_model": model, "fallback_model": model,
			"fix_passes": anyNumber, "timeout": anyString, "review_timeout": anyString, "estimate": anyString,
			"precheck": anyBool, "small": anyBool, "on_conflict": enum(string(spec.OnConflictHandBack), string(spec.OnConflictFix)),
			"submodules": anyBool, "copy": strList, "setup": anyString,
		},
		"wave": {
			"budget_usd": schema.OneOf{anyNumber, anyString}, "max_sessions": anyNumber,
			"on_quota": enum(string(spec.OnQuotaSuspend), string(spec.OnQuotaWait)), "templates": anyString, "worktrees": anyString,
		},
		"repo": {
			"path": anyString, "base": anyString, "test": anyString, "parallel": anyNumber, "changelog": anyString,
			"merge_queue": anyBool, "test_timeout": anyString, "sandbox": anyBool,
			"sandbox_writable": strList,
		},
		"lot": {
			"repo": schema.Reference{OfScopeId: scopeRepo}, "title": anyString, "brief": anyString, "run": anyString,
			"depends_on": refs(scopeLot), "also": refs(scopeRepo), "sandbox": anyBool,
			"sandbox_writable": strList, "visible": anyBool, "ux": anyBool,
		},
		"agent": {
			"kind": enum(agentKinds...), "command": anyString, "sandbox": anyBool,
		},
		"executor": {
			"url": anyString, "credentials": anyString, "queue": anyString, "lease": anyString,
			"remote": schema.List{Elem: enum(spec.RemoteSessions, spec.RemoteTests)},
		},
		"variable": {
			"type": schema.TypeDeclaration{}, "default": schema.AnyExpression{OfType: cty.DynamicPseudoType},
			"description": anyString, "sensitive": anyBool,
		},
	}
}

// blockDocs describe each block type in hovers and completion.
var blockDocs = map[string]string{
	"wave":     "The wave: its name, budgets, session cap and quota policy. Exactly one per file.",
	"defaults": "Every lot's settings unless the lot says otherwise. At most one.",
	"agent":    "An agent CLI: `claude` is built in; another name starts as a copy of it.",
	"repo":     "A repository the lots work in.",
	"lot":      "A unit of work: a `brief` for an agent (an agent lot) or a `run` command (a command lot).",
	"locals":   "Local values, referenced as `local.NAME`.",
	"variable": "An input variable, referenced as `var.NAME`.",
	"executor": "Where steps run: `executor \"nats\"` sends agent sessions and test gates to remote workers through a NATS JetStream queue. At most one.",
}

// waveSchema returns the hcl-lang schema of a wave file, built from
// spec.Schema (the blocks and attributes validate accepts) and spec.Doc
// (the descriptions and defaults of docs/wave-file.md). agentKinds are the values an
// agent's kind may take; kindAttrs the attributes each kind's adapter adds
// to the agent block (Options.AgentAttributes).
func waveSchema(agentKinds []string, kindAttrs map[string][]spec.KindAttribute) (*schema.BodySchema, error) {
	cons := constraints(agentKinds)
	root := &schema.BodySchema{Blocks: map[string]*schema.BlockSchema{}}
	var kindDocs map[string]string
	for _, bt := range spec.Schema() {
		if bt.Type == "agent" {
			bt.Attributes, kindDocs = addKindAttributes(bt.Attributes, cons["agent"], kindAttrs)
		}
		b := &schema.BlockSchema{
			Description: lang.Markdown(blockDocs[bt.Type]),
			Body:        &schema.BodySchema{Attributes: map[string]*schema.AttributeSchema{}},
		}
		for _, l := range bt.Labels {
			b.Labels = append(b.Labels, &schema.LabelSchema{Name: l})
		}
		switch bt.Type {
		case "wave":
			b.MaxItems = 1
		case "defaults", "executor":
			b.MaxItems = 1
		case "lot", "repo", "agent":
			b.Address = &schema.BlockAddrSchema{
				Steps:        schema.Address{schema.StaticStep{Name: bt.Type}, schema.LabelStep{Index: 0}},
				FriendlyName: bt.Type, ScopeId: lang.ScopeId(bt.Type), AsReference: true,
			}
		case "variable":
			b.Address = &schema.BlockAddrSchema{
				Steps:        schema.Address{schema.StaticStep{Name: "var"}, schema.LabelStep{Index: 0}},
				FriendlyName: "variable", ScopeId: scopeVariable, AsReference: true,
				AsTypeOf: &schema.BlockAsTypeOf{AttributeExpr: "type"},
			}
		case "locals":
			b.Body.AnyAttribute = &schema.AttributeSchema{
				Description: lang.Markdown("A local value, referenced as `local.NAME`."),
				Constraint:  schema.AnyExpression{OfType: cty.DynamicPseudoType},
				Address: &schema.AttributeAddrSchema{
					Steps:        schema.Address{schema.StaticStep{Name: "local"}, schema.AttrNameStep{}},
					FriendlyName: "local", ScopeId: scopeLocal, AsExprType: true, AsReference: true,
				},
			}
		}
		for _, a := range bt.Attributes {
			c := cons[bt.Type][a.Name]
			if c == nil {
				c = cons[""][a.Name]
			}
			if c == nil {
				return nil, fmt.Errorf("lsp: no constraint for %s attribute %q", bt.Type, a.Name)
			}
			doc, _ := spec.Doc(bt.Type, a.Name)
			desc := attrDoc(doc)
			if bt.Type == "agent" && kindDocs[a.Name] != "" {
				desc = kindDocs[a.Name]
			}
			b.Body.Attributes[a.Name] = &schema.AttributeSchema{
				Description: lang.Markdown(desc),
				IsRequired:  a.Required, IsOptional: !a.Required,
				Constraint: c,
			}
		}
		if bt.Type == "lot" || bt.Type == "repo" {
			b.Body.Blocks = map[string]*schema.BlockSchema{"ux": uxBlockSchema()}
		}
		root.Blocks[bt.Type] = b
	}
	return root, nil
}

// uxBlockSchema is the ux block of a repo or a lot (docs/ux.md), its
// attributes described by docs/wave-file.md's ux table.
func uxBlockSchema() *schema.BlockSchema {
	attrs := map[string]*schema.AttributeSchema{}
	for name, c := range map[string]schema.Constraint{"command": anyString, "url": anyString, "timeout": anyString, "paths": strList} {
		doc, _ := spec.Doc("ux", name)
		attrs[name] = &schema.AttributeSchema{Description: lang.Markdown(attrDoc(doc)), IsRequired: name == "url", IsOptional: name != "url", Constraint: c}
	}
	return &schema.BlockSchema{
		Description: lang.Markdown("How the UX review of a visible lot starts and opens the application (docs/ux.md)."),
		MaxItems:    1,
		Body:        &schema.BodySchema{Attributes: attrs},
	}
}

// addKindAttributes returns attrs with the attributes of every kind
// (by kind name, each name once), their constraints put in cons, and the
// hover text of each: its kind's doc (KindAttribute.Doc), after the kind's
// name, one paragraph per kind that has an attribute of that name.
func addKindAttributes(attrs []hcl.AttributeSchema, cons map[string]schema.Constraint, kindAttrs map[string][]spec.KindAttribute) ([]hcl.AttributeSchema, map[string]string) {
	kinds := make([]string, 0, len(kindAttrs))
	for k := range kindAttrs {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	docs := map[string]string{}
	for _, k := range kinds {
		for _, a := range kindAttrs[k] {
			if docs[a.Name] != "" {
				docs[a.Name] += "\n\n"
			}
			docs[a.Name] += "Kind `" + k + "`: " + attrDoc(a.Doc)
			if cons[a.Name] != nil {
				continue
			}
			cons[a.Name] = kindConstraint(a)
			attrs = append(attrs, hcl.AttributeSchema{Name: a.Name})
		}
	}
	return attrs, docs
}

// kindConstraint is the value constraint of a kind's attribute: an enum
// of its values for a string that has them.
func kindConstraint(a spec.KindAttribute) schema.Constraint {
	switch {
	case a.Type == cty.String && len(a.Enum) > 0:
		return enum(a.Enum...)
	case a.Type == cty.List(cty.String):
		return strList
	case a.Type == cty.Number:
		return anyNumber
	case a.Type == cty.Bool:
		return anyBool
	}
	return anyString
}

// attrDoc is an attribute's hover text: its meaning, then its default.
func attrDoc(d spec.AttributeDoc) string {
	s := strings.TrimSpace(d.Meaning)
	if d.Default != "" {
		s += "\n\nDefault: " + d.Default
	}
	return s
}

// targetSchema returns the view of body that reference targets are
// collected with: body with the body of every block that can hold no
// target (targetFree) left empty. hcl-lang copies a block's body schema
// for each block it walks, which for a wave of a thousand lots was most
// of the first completion after an edit; the targets are the same
// (TestTargetSchema).
func targetSchema(body *schema.BodySchema) *schema.BodySchema {
	view := *body
	view.Blocks = make(map[string]*schema.BlockSchema, len(body.Blocks))
	for name, b := range body.Blocks {
		if targetFree(b) {
			c := *b
			c.Body = &schema.BodySchema{}
			b = &c
		}
		view.Blocks[name] = b
	}
	return &view
}

// targetFree reports whether no reference target can come from inside
// a block of schema b or from its body: no nested blocks, no dependent
// bodies, no attribute with an address, nothing targetable, and an
// address (if any) that reads nothing of the body.
func targetFree(b *schema.BlockSchema) bool {
	if len(b.DependentBody) > 0 {
		return false
	}
	if a := b.Address; a != nil && (a.BodyAsData || a.InferBody || a.BodySelfRef || a.AsTypeOf != nil || a.DependentBodyAsData) {
		return false
	}
	body := b.Body
	if body == nil {
		return true
	}
	if len(body.Blocks) > 0 || body.AnyAttribute != nil || len(body.TargetableAs) > 0 || body.Targets != nil ||
		body.Extensions != nil || body.TargetableFromCurrentBlock {
		return false
	}
	for _, a := range body.Attributes {
		if a.Address != nil {
			return false
		}
	}
	return true
}
