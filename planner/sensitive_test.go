package planner

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/spec"
)

// TestSensitiveRedacted: a plan holds spec.Redacted, never the value, for a
// sensitive title, model, repo path, base and test, and a preflight
// diagnostic does not quote them either.
func TestSensitiveRedacted(t *testing.T) {
	src := `wave "w" {}
variable "s" {
  sensitive = true
  default   = "hunter2"
}
repo "api" {
  path = "./${var.s}"
  base = var.s
  test = "make ${var.s}"
}
lot "a" {
  repo  = repo.api
  title = "deploy ${var.s}"
  brief = "b"
  model = var.s
}
`
	cfg, diags := spec.NewLoader().LoadBytes([]byte(src), filepath.Join(t.TempDir(), "wave.hcl"), spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	agent := AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328 (Claude Code)"}
	p, diags := build(t, cfg, nil, fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}, agent}, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	lp, rp := p.Lots[0], p.Repos[0]
	got := []string{lp.Title, lp.Steps[0].Model, rp.Path, rp.Base, rp.Test}
	for i, s := range got {
		if s != spec.Redacted {
			t.Errorf("field %d = %q, want %s", i, s, spec.Redacted)
		}
	}
	if lp.Steps[1].Model != spec.DefaultReviewModel {
		t.Errorf("review model = %q", lp.Steps[1].Model)
	}
	for _, m := range []fakeMachine{
		{RepoFacts{}, agent},
		{RepoFacts{Exists: true, IsGit: true}, agent},
		{RepoFacts{Err: errors.New("git -C /x/hunter2: boom")}, agent},
	} {
		_, diags := build(t, cfg, nil, m, Options{})
		if !diags.HasErrors() || strings.Contains(diags.Error(), "hunter2") {
			t.Errorf("diags = %v", diags)
		}
	}
}

// TestSensitiveAgentCommand: an agent whose command derives from a
// sensitive value is shown as (sensitive): the command, the path it was
// found at, the error of its version probe and the warning that names it.
// A command the machine took from elsewhere (CADENCE_CLAUDE_BIN) is shown.
func TestSensitiveAgentCommand(t *testing.T) {
	src := `wave "w" {}
variable "s" {
  sensitive = true
  default   = "hunter2"
}
agent "claude" {
  command              = "claude-${var.s}"
  append_system_prompt = "Use ${var.s}."
}
repo "api" {
  path = "."
}
lot "a" {
  repo  = repo.api
  brief = "b"
}
`
	cfg, diags := spec.NewLoader().LoadBytes([]byte(src), filepath.Join(t.TempDir(), "wave.hcl"), spec.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if a := cfg.Agent("claude"); !a.Sensitive.Has("command") || !a.Sensitive.Has("append_system_prompt") {
		t.Fatalf("agent sensitive fields = %v", a.Sensitive)
	}
	good := RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}
	for _, agent := range []AgentFacts{
		{Command: "claude-hunter2"},
		{Command: "claude-hunter2", Path: "/opt/hunter2/claude-hunter2", Err: errors.New("/opt/hunter2/claude-hunter2: exit status 1")},
		{Command: "claude-hunter2", Path: "/opt/hunter2/claude-hunter2", Version: "1.0.0"},
	} {
		p, diags := build(t, cfg, nil, fakeMachine{good, agent}, Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		var all []string
		for _, w := range p.Warnings {
			all = append(all, w.Message)
		}
		all = append(all, p.Agent.Command, p.Agent.Path)
		if p.Agent.Err != nil {
			all = append(all, p.Agent.Err.Error())
		}
		if s := strings.Join(all, "\n"); strings.Contains(s, "hunter2") || !strings.Contains(s, spec.Redacted) {
			t.Errorf("facts %+v: the plan shows\n%s", agent, s)
		}
	}
	// an override is not the block's command: shown
	p, _ := build(t, cfg, nil, fakeMachine{good, AgentFacts{Command: "/usr/bin/other"}}, Options{})
	if p.Agent.Command != "/usr/bin/other" {
		t.Errorf("override command = %q", p.Agent.Command)
	}
}
