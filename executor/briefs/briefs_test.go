package briefs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
)

var steps = []state.StepKind{state.StepPrecheck, state.StepImplement, state.StepFix, state.StepFixMinors, state.StepReview, state.StepRecheck, state.StepUX}

// Every brief names each neighbour repository's worktree and role, and
// the lot's own repository; the read-only ones list its commits there.
// A lot without neighbours gets no such section.
func TestBriefsNameNeighbours(t *testing.T) {
	s, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	d := Data{Wave: "w", Lot: "a", Repo: "app", Base: "main", Test: "make test",
		AlsoDirs:   []string{"/wt/a@web"},
		Neighbours: []Neighbour{{Repo: "web", Dir: "/wt/a@web", Base: "develop", Test: "npm test", Commits: []string{"abc a: add w (a)"}}}}
	for _, step := range steps {
		d.Step = step
		got, err := s.Render(step, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Its own repository is app", "repository web: worktree /wt/a@web, started from develop", "npm test", "  - abc a: add w (a)"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s brief lacks %q:\n%s", step, want, got)
			}
		}
		d2 := d
		d2.Neighbours, d2.AlsoDirs = nil, nil
		if got, _ := s.Render(step, d2); strings.Contains(got, "Neighbour repositories") {
			t.Errorf("%s brief of a lot without neighbours:\n%s", step, got)
		}
	}
}

// A wave's template written before Neighbours, using AlsoDirs, still
// renders.
func TestBriefsOldTemplateAlsoDirs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "implement.tmpl"), []byte("also: {{range .AlsoDirs}}{{.}} {{end}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Render(state.StepImplement, Data{AlsoDirs: []string{"/wt/a@web"}})
	if err != nil || got != "also: /wt/a@web " {
		t.Errorf("render = %q, %v", got, err)
	}
}

// The UX brief names the application's address, its pages and the last
// UX review's findings, and says the session is read-only.
func TestUXBrief(t *testing.T) {
	s, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Render(state.StepUX, Data{Wave: "w", Lot: "a", Title: "t", Brief: "add a button", Repo: "web", Base: "main", Step: state.StepUX, Pass: 1,
		Commits: []string{"abc a: button"}, URL: "http://127.0.0.1:8080/", Paths: []string{"/settings"},
		UXFindings: []state.Finding{{Severity: state.SeverityMajor, Text: "the button overlaps the title"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Look at the running application", "http://127.0.0.1:8080/", "- /settings", "the button overlaps the title", "after fix pass 1", "read-only", "add a button", "abc a: button"} {
		if !strings.Contains(got, want) {
			t.Errorf("the UX brief lacks %q:\n%s", want, got)
		}
	}
}
