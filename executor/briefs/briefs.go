// Package briefs renders the prompts of agent sessions from templates
// embedded in the binary (precheck, implement, fix, fix-minors, ux, review,
// review-recheck, and neighbours.tmpl, the blocks that name a lot's
// neighbour repositories, and agentconfig.tmpl, the block that names the
// agent configuration files its commits change), which a wave's
// templates folder may override
// file by file (same names, .tmpl). They are parsed once per run.
package briefs

import (
	"bytes"
	"embed"
	"fmt"
	"path/filepath"
	"text/template"

	"github.com/cadence-run/cadence/internal/safefile"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

//go:embed *.tmpl
var builtin embed.FS

// Data is what a template can use.
type Data struct {
	Wave, Lot, Title, Brief string
	Repo, Base, Test        string
	// Step and Pass are the step being run.
	Step state.StepKind
	Pass int
	// Commits are the lot's commits so far ("sha subject"), oldest first.
	Commits []string
	// AgentConfig are the files the lot's commits add or change that an
	// agent CLI loads as configuration and can run as commands
	// (state.Lot.AgentConfig: "path", or "<repo>: path" in a neighbour).
	AgentConfig []string
	// Findings are the open findings a fix pass addresses.
	Findings []state.Finding
	// Answers are the lead's answers to the lot's questions.
	Answers []state.Question
	// AlsoDirs are the neighbour repositories' worktrees (the Dir of each
	// of Neighbours; kept for templates written before Neighbours).
	AlsoDirs []string
	// Neighbours are the lot's neighbour repositories (the lot's also), in
	// the wave file's order; the lot's own repository is Repo, in the
	// session's working folder.
	Neighbours []Neighbour
	// URL and Paths are a UX review's (spec.UX): the running application's
	// address and the pages to visit first; UXFindings the findings of the
	// lot's last UX review (state.Lot.UXFindings).
	URL        string
	Paths      []string
	UXFindings []state.Finding
}

// Neighbour is one neighbour repository of a lot, as a brief names it.
type Neighbour struct {
	// Repo is its name in the wave file; Dir, the absolute path of the
	// lot's worktree of it (on the lot's branch); Base, its base branch;
	// Test, its test gate ("" when it has none), run in Dir.
	Repo, Dir, Base, Test string
	// Commits are the lot's commits in it so far ("sha subject"), oldest
	// first.
	Commits []string
}

// Set is the templates of one run, parsed once.
type Set struct {
	t *template.Template
}

// Load parses the built-in templates and then, when dir is not empty, every
// *.tmpl file in it, which replaces the built-in one of the same name.
func Load(dir string) (*Set, error) {
	t, err := template.New("briefs").Option("missingkey=error").ParseFS(builtin, "*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("built-in brief templates: %w", err)
	}
	if dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.tmpl"))
		for _, f := range files {
			// Bounded (internal/safefile): a template is a regular file
			// of at most 1 MiB, so a FIFO or a link to /dev/zero cannot
			// hang or exhaust apply.
			b, err := safefile.Read(f, spec.MaxFileBytes)
			if err != nil {
				return nil, fmt.Errorf("brief template: %w", err)
			}
			if _, err := t.New(filepath.Base(f)).Parse(string(b)); err != nil {
				return nil, fmt.Errorf("brief template %s: %w", f, err)
			}
		}
	}
	return &Set{t: t}, nil
}

// Render renders the template of a step: <step kind>.tmpl.
func (s *Set) Render(step state.StepKind, d Data) (string, error) {
	var b bytes.Buffer
	if err := s.t.ExecuteTemplate(&b, string(step)+".tmpl", d); err != nil {
		return "", fmt.Errorf("render %s brief: %w", step, err)
	}
	return b.String(), nil
}
