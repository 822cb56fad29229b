package agent

import (
	"fmt"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
)

// Settings are an agent's own settings as its kind's adapter decoded them
// (spec.Agent.Settings): the interface says what the rest of cadence asks
// of them (whether they bypass the sandbox); the adapter reads its own
// type back from spec.Agent.Settings when it runs a session.
type Settings = spec.AgentSettings

// SettingsDecoder is an Adapter whose agent blocks take attributes of
// their own beyond the common ones (spec.AgentCommon: kind, command,
// sandbox, fallback_model), as a Terraform provider owns its block's body.
// An adapter that is not one takes the common attributes only.
type SettingsDecoder interface {
	// Attributes describe the adapter's own attributes, for the language
	// server's completion and hovers, each with its Doc (the kind's table
	// in docs/wave-file.md).
	Attributes() []spec.KindAttribute
	// DecodeSettings decodes an agent block's body past the common
	// attributes (nil for an agent declared by no block: the kind's
	// defaults), evaluated with ectx (the wave's variables, locals and
	// functions), with the adapter's own schema: an attribute it does not
	// take is an error ("Unsupported argument"), and each value is judged
	// with spec's rules and messages (spec.BodyReader), on its range.
	// The settings are never nil: what is absent or wrong keeps the
	// kind's default.
	DecodeSettings(body hcl.Body, ectx *hcl.EvalContext) (Settings, hcl.Diagnostics)
}

// DecodeSettings decodes the settings of an agent of kind with its adapter
// (SettingsDecoder): it is spec.Options.AgentSettings, which the CLI passes
// wherever it loads a wave file (validate, plan, apply, the language
// server). An adapter with no settings of its own refuses every attribute
// of body and gives nil settings. A kind with no adapter gives nil and,
// when there is a body to read, an error on it (spec refuses such a kind
// at its kind attribute first: Options.AgentKinds).
func (r *Registry) DecodeSettings(kind string, body hcl.Body, ectx *hcl.EvalContext) (spec.AgentSettings, hcl.Diagnostics) {
	ad, ok := r.Lookup(kind)
	switch {
	case !ok && body == nil:
		return nil, nil
	case !ok:
		rng := body.MissingItemRange()
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unknown agent kind",
			Detail: fmt.Sprintf("No agent adapter runs kind %q; the kinds are %v.", kind, r.Kinds()), Subject: &rng}}
	}
	if d, ok := ad.(SettingsDecoder); ok {
		return d.DecodeSettings(body, ectx)
	}
	if body == nil {
		return nil, nil
	}
	_, diags := body.Content(&hcl.BodySchema{})
	return nil, diags
}

// Attributes returns the attributes each kind's adapter adds to the agent
// block, by kind (SettingsDecoder.Attributes; a kind without is left out).
func (r *Registry) Attributes() map[string][]spec.KindAttribute {
	out := map[string][]spec.KindAttribute{}
	for _, a := range r.Adapters() {
		if d, ok := a.(SettingsDecoder); ok {
			out[a.Kind()] = d.Attributes()
		}
	}
	return out
}
