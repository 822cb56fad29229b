package codex

import (
	"fmt"
	"sort"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Settings are the attributes an agent block of kind "codex" takes beyond
// the common ones. The adapter decodes them (DecodeSettings) and reads
// them back from spec.Agent.Settings when it runs a session (settingsOf).
type Settings struct {
	// Model is the model of a session whose lot names none of this
	// vendor's (model; "": the CLI's configured default).
	Model string
	// Provider is the Codex model provider sessions use (-c
	// model_provider=; provider): "openai", the CLI's built-in one, or one
	// the user's $CODEX_HOME/config.toml defines.
	Provider string
	// WritableRoots are folders a write session may write to besides its
	// worktrees and their git dirs (writable_roots).
	WritableRoots []string
	// Retries bounds the CLI's own request and stream retries of the
	// provider (request_max_retries, stream_max_retries; retries): the
	// CLI's own would retry a 429 with retry-after for ever.
	Retries int
	// Prices are list prices by model (prices), for the cost of a session
	// and budget_usd: the CLI reports none.
	Prices map[string]Prices
}

// Prices are a model's prices in dollars per million tokens (millionths of
// a dollar per token): Input for input tokens not read from the cache,
// Cached for cached input tokens, Output for output (reasoning included).
type Prices struct {
	Input, Cached, Output float64
}

// Micros is the price of u at p, in millionths of a dollar (cache writes
// at the input price).
func (p Prices) Micros(u state.Usage) int64 {
	return int64(float64(u.Input+u.CacheWrite)*p.Input + float64(u.CacheRead)*p.Cached + float64(u.Output)*p.Output + 0.5)
}

// DefaultRetries bounds the CLI's request and stream retries by default.
const DefaultRetries = 3

// DefaultProvider is the provider of an agent that names none: the CLI's
// built-in OpenAI provider.
const DefaultProvider = "openai"

var _ agent.SettingsDecoder = (*Adapter)(nil)

// DefaultSettings are the settings of a codex agent that sets none.
func DefaultSettings() *Settings {
	return &Settings{Provider: DefaultProvider, Retries: DefaultRetries}
}

// DefaultModel is the model of a session whose lot names none (model;
// "": the CLI's configured default): spec records it as the step's model
// (spec.Agent.DefaultModel), so the plan and the state name it.
func (s *Settings) DefaultModel() string { return s.Model }

// SandboxBypass implements agent.Settings: no setting of a codex agent
// leaves the sandbox ("sandbox = false", common to every kind, does).
func (*Settings) SandboxBypass() string { return "" }

var priceType = cty.Object(map[string]cty.Type{"input": cty.Number, "cached": cty.Number, "output": cty.Number})

// attributes are the attributes of Settings, in the order the docs list
// them.
var attributes = []spec.KindAttribute{
	{Name: "model", Type: cty.String},
	{Name: "provider", Type: cty.String},
	{Name: "writable_roots", Type: cty.List(cty.String)},
	{Name: "retries", Type: cty.Number},
	{Name: "prices", Type: cty.Map(priceType)},
}

// Attributes implements agent.SettingsDecoder, each with its docs
// (attrdocs.go, generated from docs/wave-file.md).
func (*Adapter) Attributes() []spec.KindAttribute {
	return spec.WithDocs(attributes, attributeDocs)
}

// DecodeSettings implements agent.SettingsDecoder: DefaultSettings, with
// what body sets over them. None may derive from a sensitive value.
func (*Adapter) DecodeSettings(body hcl.Body, ectx *hcl.EvalContext) (agent.Settings, hcl.Diagnostics) {
	s := DefaultSettings()
	if body == nil {
		return s, nil
	}
	c, diags := body.Content(spec.BodySchemaOf(attributes))
	r := spec.NewBodyReader(ectx)
	r.Add(diags)
	if v, ok := r.Str(c.Attributes["model"]); ok {
		s.Model = v
	}
	if v, ok := r.Str(c.Attributes["provider"]); ok {
		if v == "" {
			rng := c.Attributes["provider"].Expr.Range()
			r.Add(hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid provider",
				Detail: "provider names a Codex model provider (\"openai\", or one of your config.toml); it cannot be empty.", Subject: &rng}})
		} else {
			s.Provider = v
		}
	}
	if l, ok := r.StrList(c.Attributes["writable_roots"]); ok {
		s.WritableRoots = l
	}
	if n, ok := r.Whole(c.Attributes["retries"], 0); ok {
		s.Retries = n
	}
	if a := c.Attributes["prices"]; a != nil {
		p, d := decodePrices(a, ectx)
		r.Add(d)
		if !d.HasErrors() {
			s.Prices = p
		}
	}
	return s, r.Diagnostics()
}

// decodePrices reads prices = { "model" = { input = 1.25, cached = 0.125,
// output = 10 }, ... }: every model with its three prices, none negative.
func decodePrices(a *hcl.Attribute, ectx *hcl.EvalContext) (map[string]Prices, hcl.Diagnostics) {
	v, diags := a.Expr.Value(ectx)
	if diags.HasErrors() {
		return nil, diags
	}
	rng := a.Expr.Range()
	bad := func(detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid prices", Detail: detail, Subject: &rng, Expression: a.Expr, EvalContext: ectx}}
	}
	if v.IsNull() || !v.IsWhollyKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil, bad(`prices is a map of models to their prices in dollars per million tokens: { "gpt-5" = { input = 1.25, cached = 0.125, output = 10 } }.`)
	}
	if v.IsMarked() {
		return nil, bad("prices cannot derive from a sensitive value.")
	}
	out := map[string]Prices{}
	models := []string{}
	for it := v.ElementIterator(); it.Next(); {
		k, _ := it.Element()
		models = append(models, k.AsString())
	}
	sort.Strings(models)
	for _, m := range models {
		var e cty.Value
		if v.Type().IsObjectType() {
			e = v.GetAttr(m)
		} else {
			e = v.Index(cty.StringVal(m))
		}
		if e.IsNull() || !(e.Type().IsObjectType() || e.Type().IsMapType()) {
			return nil, bad(fmt.Sprintf("the prices of model %q are an object { input, cached, output } in dollars per million tokens.", m))
		}
		var p Prices
		fields := map[string]*float64{"input": &p.Input, "cached": &p.Cached, "output": &p.Output}
		names := []string{"cached", "input", "output"}
		for it := e.ElementIterator(); it.Next(); {
			k, _ := it.Element()
			if _, ok := fields[k.AsString()]; !ok {
				return nil, bad(fmt.Sprintf("the prices of model %q take input, cached and output; not %q.", m, k.AsString()))
			}
		}
		for _, n := range names {
			var f cty.Value
			if e.Type().IsObjectType() {
				if !e.Type().HasAttribute(n) {
					return nil, bad(fmt.Sprintf("the prices of model %q need %s (dollars per million tokens).", m, n))
				}
				f = e.GetAttr(n)
			} else {
				f = e.Index(cty.StringVal(n))
			}
			if f.IsNull() || f.Type() != cty.Number {
				return nil, bad(fmt.Sprintf("the %s price of model %q is a number of dollars per million tokens.", n, m))
			}
			x, _ := f.AsBigFloat().Float64()
			if x < 0 {
				return nil, bad(fmt.Sprintf("the %s price of model %q is negative.", n, m))
			}
			*fields[n] = x
		}
		out[m] = p
	}
	return out, nil
}

// settingsOf returns the settings of agent a, or DefaultSettings for an
// agent whose settings were not decoded.
func settingsOf(a *spec.Agent) *Settings {
	if a != nil {
		if s, ok := a.Settings.(*Settings); ok && s != nil {
			return s
		}
	}
	return DefaultSettings()
}
