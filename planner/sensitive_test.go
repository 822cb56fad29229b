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
