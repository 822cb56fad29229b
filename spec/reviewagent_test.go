package spec

import (
	"strings"
	"testing"
)

// TestReviewAgent checks a lot's agents per step: review_agent is the
// lot's own, else the defaults', else the lot's agent; review_model is
// given to the review agent, and an unwritten model of an agent of
// another kind than claude is "" (that agent's own default), the
// fallback_model each agent's own unless written.
func TestReviewAgent(t *testing.T) {
	src := head + `agent "codex" {
  kind = "codex"
  fallback_model = "o4"
}
agent "opus" {
  fallback_model = "sonnet"
}
defaults {
  review_agent = agent.opus
}
lot "mixed" {
  repo = repo.api
  brief = "x"
  review_agent = agent.codex
}
lot "fromdefaults" {
  repo = repo.api
  brief = "x"
  agent = agent.codex
}
lot "written" {
  repo = repo.api
  brief = "x"
  agent = agent.codex
  review_agent = agent.codex
  model = "gpt-5"
  review_model = "gpt-5-mini"
  fallback_model = "gpt-4"
}
`
	cfg, diags := load(t, src, Options{AgentKinds: []string{"claude", "codex"}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	codex, opus, claude := cfg.Agent("codex"), cfg.Agent("opus"), cfg.Agent(BuiltinAgent)
	for _, tc := range []struct {
		lot                      string
		agent, review            *Agent
		model, reviewModel       string
		fallback, reviewFallback string
	}{
		{"mixed", claude, codex, DefaultModel, "", "", "o4"},
		{"fromdefaults", codex, opus, "", DefaultReviewModel, "o4", "sonnet"},
		{"written", codex, codex, "gpt-5", "gpt-5-mini", "gpt-4", "gpt-4"},
	} {
		l := cfg.Lot(tc.lot)
		if l.Agent != tc.agent || l.ReviewAgent != tc.review {
			t.Errorf("lot %s: agent %s, review agent %s; want %s, %s", tc.lot, l.Agent.Name, l.ReviewAgent.Name, tc.agent.Name, tc.review.Name)
		}
		if l.Model != tc.model || l.ReviewModel != tc.reviewModel || l.FallbackModel != tc.fallback || l.ReviewFallbackModel != tc.reviewFallback {
			t.Errorf("lot %s: models %q/%q, fallbacks %q/%q; want %q/%q, %q/%q", tc.lot, l.Model, l.ReviewModel, l.FallbackModel, l.ReviewFallbackModel,
				tc.model, tc.reviewModel, tc.fallback, tc.reviewFallback)
		}
	}
	cfg, diags = load(t, head+"lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n}\n", Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if l := cfg.Lot("a"); l.ReviewAgent != l.Agent || l.ReviewModel != DefaultReviewModel {
		t.Errorf("unwritten review_agent: %s (%q), want the lot's agent with %q", l.ReviewAgent.Name, l.ReviewModel, DefaultReviewModel)
	}
}

// TestReviewAgentDiagnostics: an unknown review_agent is an error at its
// reference with the closest agent; a command lot takes none; it must be a
// reference to an agent.
func TestReviewAgentDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name, src, summary, detail, snippet string
		line                                int
	}{
		{"unknown in lot", head + "agent \"reviewer\" {}\nlot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  review_agent = agent.reveiwer\n}",
			"Reference to undeclared agent", "Did you mean agent.reviewer?", "agent.reveiwer", 11},
		{"unknown in defaults", head + "defaults {\n  review_agent = agent.claud\n}\nlot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n}",
			"Reference to undeclared agent", "Did you mean agent.claude?", "agent.claud", 8},
		{"command lot", head + "lot \"a\" {\n  run = \"true\"\n  review_agent = agent.claude\n}", "Not for a command lot", "agent lots only", "review_agent", 9},
		{"not an agent", head + "lot \"a\" {\n  repo = repo.api\n  brief = \"x\"\n  review_agent = repo.api\n}", "Wrong kind of reference", "refers to a repo", "repo.api", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := load(t, tc.src, Options{})
			n := 0
			for _, d := range diags {
				if d.Summary != tc.summary {
					continue
				}
				n++
				if !strings.Contains(d.Detail, tc.detail) {
					t.Errorf("detail %q does not contain %q", d.Detail, tc.detail)
				}
				if d.Subject == nil || d.Subject.Start.Line != tc.line || !strings.HasSuffix(d.Subject.Filename, "wave.hcl") {
					t.Errorf("subject %v, want wave.hcl line %d", d.Subject, tc.line)
					continue
				}
				lines := strings.Split(tc.src, "\n")
				if got := lines[d.Subject.Start.Line-1][d.Subject.Start.Column-1 : d.Subject.End.Column-1]; got != tc.snippet {
					t.Errorf("snippet %q, want %q", got, tc.snippet)
				}
			}
			if n != 1 {
				t.Errorf("%d %q diagnostics, want 1; got: %v", n, tc.summary, diags)
			}
		})
	}
}
