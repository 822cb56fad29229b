package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/schemas/schemacheck"
	"github.com/cadence-run/cadence/spec"
)

const fallbackWave = `wave "fb" {}
defaults {
  model          = "sonnet"
  review_model   = "opus"
  fallback_model = "haiku"
}
repo "app" {
  path = "app"
}
lot "a" {
  repo  = repo.app
  brief = "Do a."
}
lot "b" {
  repo           = repo.app
  brief          = "Do b."
  model          = "haiku"
  fallback_model = "sonnet"
  fix_passes     = 1
}
lot "c" {
  run = "true"
}
`

// A lot's fallback_model is shown beside the models of its steps in every
// human format, and in JSON as the lot's fallback_model, beside its branch;
// a saved plan (ParseJSON) keeps both.
func TestFallbackModelAndBranch(t *testing.T) {
	cfg, diags := spec.NewLoader().LoadBytes([]byte(fallbackWave), "fb/wave.hcl", spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	p := build(t, planner.Input{Config: cfg})
	outs := map[string]string{}
	for _, f := range formats {
		var buf bytes.Buffer
		if err := f.render(&buf, p); err != nil {
			t.Fatal(err)
		}
		outs[f.ext] = buf.String()
	}
	for ext, want := range map[string][]string{
		"txt": {
			"implement (sonnet, fallback haiku) → review (opus, fallback haiku)",
			// the fallback is not passed for a step whose model it is
			"implement (haiku, fallback sonnet) → review (opus, fallback sonnet) → fix ≤1",
		},
		"md": {"implement (sonnet, fallback haiku) → review (opus, fallback haiku)"},
		"json": {
			`"fallback_model": "haiku"`, `"fallback_model": "sonnet"`, `"fallback_model": ""`,
			`"branch": "cadence/fb/a"`, `"branch": "cadence/fb/b"`, `"branch": ""`,
		},
	} {
		for _, s := range want {
			if !strings.Contains(outs[ext], s) {
				t.Errorf("%s lacks %q:\n%s", ext, s, outs[ext])
			}
		}
	}
	if err := schemacheck.Validate("plan.schema.json", []byte(outs["json"])); err != nil {
		t.Fatalf("plan JSON does not validate: %v", err)
	}
	back, err := ParseJSON([]byte(outs["json"]))
	if err != nil {
		t.Fatal(err)
	}
	for i, lp := range back.Lots {
		if lp.FallbackModel != p.Lots[i].FallbackModel || lp.Branch != p.Lots[i].Branch {
			t.Errorf("lot %s after ParseJSON: fallback %q branch %q, want %q %q", lp.ID, lp.FallbackModel, lp.Branch, p.Lots[i].FallbackModel, p.Lots[i].Branch)
		}
	}
}

// After an API failure suspended the wave (suspended-api), the plan says so
// and what to fix: the cause the suspended lot records (apiAdvice's
// sentence), in text, markdown and JSON.
func TestSuspendedAPI(t *testing.T) {
	cfg, diags := spec.NewLoader().LoadBytes([]byte(fallbackWave), "fb/wave.hcl", spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	advice := "The API refused the sessions for lack of credit (API error 400: Credit balance is too low): add credit to the account (or fix its billing)"
	st := &state.State{FormatVersion: state.FormatVersion, Wave: "fb", Status: state.WaveSuspendedAPI, Lots: map[string]*state.Lot{
		"a": {Status: state.LotSuspended, Cause: advice, Steps: []state.Step{{Kind: state.StepImplement, Status: state.StepInterrupted, Cause: advice}}},
		"b": {Status: state.LotInterrupted, Cause: "stopped by cadence: the wave stopped on an API failure"},
	}}
	p := build(t, planner.Input{Config: cfg, State: st})
	if p.APIFailure != advice {
		t.Errorf("plan's API failure %q, want the suspended lot's cause", p.APIFailure)
	}
	outs := map[string]string{}
	for _, f := range formats {
		var buf bytes.Buffer
		if err := f.render(&buf, p); err != nil {
			t.Fatal(err)
		}
		outs[f.ext] = buf.String()
	}
	for ext, want := range map[string]string{
		"txt":  "  the last apply stopped on an API failure: " + advice + "; then cadence apply resumes\n",
		"md":   "**Suspended:** the last apply stopped on an API failure",
		"json": `"api_failure": "` + advice + `"`,
	} {
		if !strings.Contains(outs[ext], want) {
			t.Errorf("%s lacks %q:\n%s", ext, want, outs[ext])
		}
	}
	if !strings.Contains(outs["txt"], "\nSuspended:") {
		t.Errorf("txt has no Suspended line:\n%s", outs["txt"])
	}
	if err := schemacheck.Validate("plan.schema.json", []byte(outs["json"])); err != nil {
		t.Fatalf("plan JSON does not validate: %v", err)
	}
	// Once the wave has gone on, nothing is said.
	st.Status = state.WaveNeedsLead
	if p := build(t, planner.Input{Config: cfg, State: st}); p.APIFailure != "" {
		t.Errorf("API failure %q on a wave not suspended-api", p.APIFailure)
	}
}
