//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2EReviewAgent: a lot implemented by the built-in claude agent and
// reviewed by a second Claude Code agent block (review_agent) with another
// model: the fake API sees each session's requests with its agent's model
// (model for implement, review_model for review); the state records each
// step's agent, vendor, model and raw usage; the plan names the review's
// agent and status shows one vendor's spend (no per-vendor lines).
func TestE2EReviewAgent(t *testing.T) {
	t.Parallel()
	cli := fakeapi.FindCLI(t)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"a-review0":    {review("conform")},
	}, waveOpts{
		Lot:  "  model        = \"claude-sonnet-5-5\"\n  review_agent = agent.reviewer\n  review_model = \"claude-haiku-5-5\"",
		More: fmt.Sprintf("\nagent \"reviewer\" {\n  command     = %q\n  max_retries = 0\n}\n", cli),
	})
	plan := e.cadence("plan", e.wave)
	plan.wantCode(t, 0)
	plan.wantOut(t, `review \(claude-haiku-5-5 by reviewer, claude\)`, `implement \(claude-sonnet-5-5 by claude\)`)
	r := e.apply()
	r.wantCode(t, 0)
	for marker, want := range map[string]string{"a-implement0": "claude-sonnet-5-5", "a-review0": "claude-haiku-5-5"} {
		reqs := e.turns(marker)
		if len(reqs) == 0 {
			t.Errorf("no request of session %s", marker)
		}
		for _, req := range reqs {
			if req.Model != want {
				t.Errorf("%s: a request with model %q, want %q", marker, req.Model, want)
			}
		}
	}
	l := e.lot(e.state(), "a")
	if l.Status != state.LotDone {
		t.Fatalf("lot a %s (%s):\n%s", l.Status, l.Cause, r.out)
	}
	var got []string
	for _, s := range l.Steps {
		if !s.Kind.Session() {
			continue
		}
		got = append(got, fmt.Sprintf("%s %s %s %s", s.Kind, s.Agent, s.Vendor, s.Model))
		if s.RawUsage["output_tokens"] != s.Usage.Output || s.RawUsage["input_tokens"] != s.Usage.Input || s.Usage.Output == 0 {
			t.Errorf("%s: raw usage %v, usage %+v", s.Kind, s.RawUsage, s.Usage)
		}
	}
	if want := "implement claude claude claude-sonnet-5-5|review reviewer claude claude-haiku-5-5"; strings.Join(got, "|") != want {
		t.Errorf("session steps %q, want %q", strings.Join(got, "|"), want)
	}
	st := e.cadence("status", e.wave)
	st.wantCode(t, 0)
	if strings.Contains(st.out, "Spend per vendor") {
		t.Errorf("status shows a spend per vendor for one vendor:\n%s", st.out)
	}
}
