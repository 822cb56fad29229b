package remote

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// WorkAgent is the step's agent block as a job carries it (docs/remote.md,
// Worker): its name, kind, `sandbox = false` and the kind's own settings
// (the block past spec.AgentCommon), evaluated on the lead. The worker
// writes them back into the agent block of the run's wave file, so that
// its loader decodes them with the kind's adapter (agent.SettingsDecoder).
// command (the CLI's path) is the worker's own; a setting whose value
// derives from a sensitive value (env(), a sensitive variable) never
// leaves the lead: it is named in LeftOut, and the worker's default holds.
type WorkAgent struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	NoSandbox bool   `json:"no_sandbox,omitempty"`
	// Settings map an attribute to its value as cty JSON with its type
	// (ctyjson.SimpleJSONValue).
	Settings map[string]json.RawMessage `json:"settings,omitempty"`
	LeftOut  []string                   `json:"left_out,omitempty"`
}

// wireAgent is agent a as a job carries it; nil for none or the built-in
// agent (the worker's defaults of its kind).
func wireAgent(a *spec.Agent) (*WorkAgent, error) {
	if a == nil || a.Builtin {
		return nil, nil
	}
	w := &WorkAgent{Name: a.Name, Kind: a.Kind, NoSandbox: a.NoSandbox}
	if a.Body == nil {
		return w, nil
	}
	attrs, diags := a.Body.JustAttributes()
	if diags.HasErrors() {
		return nil, fmt.Errorf("agent %s: %s", a.Name, diags.Error())
	}
	for name, attr := range attrs {
		if a.Sensitive.Has(name) {
			w.LeftOut = append(w.LeftOut, name)
			continue
		}
		v, diags := attr.Expr.Value(a.EvalContext)
		if diags.HasErrors() {
			return nil, fmt.Errorf("agent %s: %s", a.Name, diags.Error())
		}
		if _, marks := v.UnmarkDeep(); len(marks) > 0 {
			w.LeftOut = append(w.LeftOut, name)
			continue
		}
		raw, err := json.Marshal(ctyjson.SimpleJSONValue{Value: v})
		if err != nil {
			return nil, fmt.Errorf("agent %s: %s: %w", a.Name, name, err)
		}
		if w.Settings == nil {
			w.Settings = map[string]json.RawMessage{}
		}
		w.Settings[name] = raw
	}
	sort.Strings(w.LeftOut)
	return w, nil
}

// common are the agent block's attributes a job never sets on the worker
// from Settings: spec's own (the worker's command; kind and sandbox from
// their fields; fallback_model travels in the step request).
var common = map[string]bool{"kind": true, "command": true, "sandbox": true, "fallback_model": true}

// agentBlock writes w as the agent block of a run's wave file. Errors: a
// setting that is not an identifier, one of the common attributes, or not
// cty JSON.
func agentBlock(b *strings.Builder, w *WorkAgent) error {
	fmt.Fprintf(b, "agent %s {\n  kind = %s\n", hclString(w.Name), hclString(w.Kind))
	if w.NoSandbox {
		b.WriteString("  sandbox = false\n")
	}
	names := make([]string, 0, len(w.Settings))
	for name := range w.Settings {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !hclsyntax.ValidIdentifier(name) || common[name] {
			return fmt.Errorf("agent %s: setting %q: not an attribute of the kind's own", w.Name, name)
		}
		var v ctyjson.SimpleJSONValue
		if err := json.Unmarshal(w.Settings[name], &v); err != nil {
			return fmt.Errorf("agent %s: setting %s: %w", w.Name, name, err)
		}
		fmt.Fprintf(b, "  %s = %s\n", name, hclwrite.TokensForValue(v.Value).Bytes())
	}
	b.WriteString("}\n")
	return nil
}
