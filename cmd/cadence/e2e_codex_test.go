//go:build unix

package main

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/fakeapi/openai"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2ECodex runs `cadence apply` end to end with the real pinned Codex
// CLI (openai.FindCLI) on the fake Responses API, and the real Claude Code
// CLI on the fake Messages API where a wave mixes both. The scenarios are
// independent and run in parallel.
func TestE2ECodex(t *testing.T) {
	openai.FindCLI(t)
	fakeapi.FindCLI(t)
	for _, sc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"lifecycle", e2eCodexLifecycle},
		{"mixed", e2eCodexMixed},
		{"format-retry", e2eCodexFormatRetry},
		{"format-retry-handed-back", e2eCodexNoReport},
		{"quota-suspend", e2eCodexQuotaSuspend},
		{"quota-wait", e2eCodexQuotaWait},
		{"timeout", e2eCodexTimeout},
		{"kill-9", e2eCodexKill9},
	} {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.run(t)
		})
	}
}

// A codex lot: implement commits, the test gate passes, the review finds a
// blocking issue, a fix in a fresh thread commits, the gate passes, the
// re-review is conform, the lot integrates. Every session step records the
// agent codex, its vendor and model, and its raw usage equals what the
// fake served; counted tokens exclude the cached input.
func e2eCodexLifecycle(t *testing.T) {
	e := newCodexE2E(t, nil, map[string]openai.Script{
		"a-implement0": {codexCommit("a", "f.txt", "f"), codexDone("added f.txt")},
		"a-review0":    {codexReview("not conform", finding("blocking", "f.txt", 1, "f.txt must say hello"))},
		"a-fix1":       {codexCommit("a", "f.txt", "hello"), codexDone("f.txt says hello")},
		"a-review1":    {codexReview("conform")},
	}, codexOpts{waveOpts: waveOpts{Lot: "  agent = agent.codex"}})
	base := e.git(e.repo, "rev-parse", "main")
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	st := e.state()
	a := e.lot(st, "a")
	if got, want := steps(a), "implement:ok test:ok review:ok fix1:ok test1:ok review1:ok integrate:ok"; a.Status != state.LotDone || got != want {
		t.Fatalf("lot a %s (%s): steps %q, want %q", a.Status, a.Cause, got, want)
	}
	if got := e.git(e.repo, "log", "--format=%s", base+"..main"); got != "a: add f.txt (a)\na: add f.txt (a)" {
		t.Errorf("main gained %q", got)
	}
	if got := e.git(e.repo, "show", "main:f.txt"); got != "hello" {
		t.Errorf("main:f.txt = %q", got)
	}
	if f := e.codexTurns("a-fix1"); len(f) == 0 || !strings.Contains(string(f[0].Body), "f.txt must say hello") {
		t.Errorf("the fix brief lacks the review's finding")
	}
	threads := map[string]bool{}
	for _, s := range a.Steps {
		if !s.Kind.Session() {
			continue
		}
		if s.Agent != "codex" || s.Vendor != "codex" || s.Model != codexModel {
			t.Errorf("%s%d: agent %q vendor %q model %q", s.Kind, s.Pass, s.Agent, s.Vendor, s.Model)
		}
		marker := fmt.Sprintf("a-%s%d", s.Kind, s.Pass)
		if got, want := rawCodex(s), e.served(marker); !maps.Equal(got, want) {
			t.Errorf("%s: raw usage %v, the fake served %v", marker, got, want)
		}
		if want := s.RawUsage["input_tokens"] - s.RawUsage["cached_input_tokens"] + s.RawUsage["output_tokens"]; s.Usage.Counted() != want || s.CostMicros <= 0 || !s.CostEstimated {
			t.Errorf("%s: usage %+v (counted %d, want %d), cost %d µ$ estimated %v", marker, s.Usage, s.Usage.Counted(), want, s.CostMicros, s.CostEstimated)
		}
		for _, q := range e.oai.RequestsFor(marker) {
			threads[q.Thread] = true
		}
	}
	if len(threads) != 4 {
		t.Errorf("%d threads for 4 sessions: each step is a fresh session", len(threads))
	}
	if st.Consumed.Counted != sumSteps(st) || !st.Consumed.CostEstimated {
		t.Errorf("consumed %+v, steps count %d", st.Consumed, sumSteps(st))
	}
}

// A wave mixing both agents: lot a is implemented by claude and reviewed
// by codex (review_agent), lot b the reverse. Both integrate; each
// session's requests reach its vendor's fake; the state records each
// session's agent, vendor, model and raw usage (each in its CLI's own
// names); status shows the spend per vendor, text and -json.
func e2eCodexMixed(t *testing.T) {
	e := newCodexE2E(t, map[string]fakeapi.Script{
		"a-implement0": implementScript(),
		"b-review0":    {review("conform")},
	}, map[string]openai.Script{
		"a-review0":    {codexReview("conform")},
		"b-implement0": {codexCommit("b", "b.txt", "b"), codexDone("added b.txt")},
	}, codexOpts{waveOpts: waveOpts{
		Lot: "  review_agent = agent.codex",
		More: `
lot "b" {
  repo         = repo.app
  title        = "Add b"
  brief        = "Add the file b.txt."
  agent        = agent.codex
  review_agent = agent.claude
}
`}})
	plan := e.cadence("plan", "-no-color", e.wave)
	plan.wantCode(t, 0)
	plan.wantOut(t, `review \(`+regexp.QuoteMeta(codexModel)+` by codex\)`, `implement \(`+regexp.QuoteMeta(codexModel)+` by codex\)`)
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 2 of 2 lots done`, `Spend per vendor:`, `(?m)^  claude\s+2 sessions`, `(?m)^  codex\s+2 sessions`)
	for _, f := range []string{"f.txt", "b.txt"} {
		if got := e.git(e.repo, "show", "main:"+f); got == "" {
			t.Errorf("main lacks %s", f)
		}
	}
	st := e.state()
	want := map[string]string{
		"a implement": "claude claude sonnet",
		"a review":    "codex codex " + codexModel,
		"b implement": "codex codex " + codexModel,
		"b review":    "claude claude opus",
	}
	for _, id := range []string{"a", "b"} {
		l := e.lot(st, id)
		if l.Status != state.LotDone {
			t.Fatalf("lot %s %s (%s): %s", id, l.Status, l.Cause, steps(l))
		}
		for _, s := range l.Steps {
			if !s.Kind.Session() {
				continue
			}
			key := id + " " + string(s.Kind)
			if got := s.Agent + " " + s.Vendor + " " + s.Model; got != want[key] {
				t.Errorf("%s: agent vendor model %q, want %q", key, got, want[key])
			}
			if s.Vendor == "codex" {
				if got, served := rawCodex(s), e.served(fmt.Sprintf("%s-%s0", id, s.Kind)); !maps.Equal(got, served) {
					t.Errorf("%s: raw usage %v, the fake served %v", key, got, served)
				}
			} else if s.RawUsage["output_tokens"] != s.Usage.Output || s.RawUsage["input_tokens"] != s.Usage.Input || s.Usage.Output == 0 {
				t.Errorf("%s: raw usage %v, usage %+v", key, s.RawUsage, s.Usage)
			}
		}
	}
	if n := len(e.turns("a-review0")) + len(e.turns("b-implement0")); n != 0 {
		t.Errorf("%d codex steps' requests reached the Messages fake", n)
	}
	if n := len(e.oai.RequestsFor("a-implement0")) + len(e.oai.RequestsFor("b-review0")); n != 0 {
		t.Errorf("%d claude steps' requests reached the Responses fake", n)
	}
	s := e.cadence("status", "-no-color", e.wave)
	s.wantCode(t, 0)
	s.wantOut(t, `Spend per vendor:`, `(?m)^  claude\s+2 sessions\s+\S+ counted tokens`, `(?m)^  codex\s+2 sessions\s+\S+ counted tokens\s+\(\+\S+ cache reads\)\s+~\$[0-9.]+ \(estimated\)`)
	j := e.cadence("status", "-json", e.wave)
	j.wantCode(t, 0)
	j.wantOut(t, `"spend_by_vendor":\s*\[\s*\{\s*"vendor":\s*"claude",\s*"sessions":\s*2`, `\{\s*"vendor":\s*"codex",\s*"sessions":\s*2`)
}
