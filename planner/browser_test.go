package planner

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/spec"
)

// browserlessMachine is a fakeMachine whose UX sessions get a browser or
// not by agent kind: the agent cx stands for one with no browser (codex).
type browserlessMachine struct {
	fakeMachine
	asked map[string]int
}

func (m browserlessMachine) BrowserMissing(a *spec.Agent) string {
	m.asked[a.Name]++
	if a.Name == "cx" {
		return "the codex agent has no browser in cadence"
	}
	return "the browser (/nonexistent) not found; install it"
}

// TestBrowserWarnings: the pending lots whose UX review would get no
// browser are warned of once per cause, naming the lots; a lot that is
// not visible, has ux = false, or is done is not; each review agent is
// asked once; an offline plan and a machine with a browser warn of none.
func TestBrowserWarnings(t *testing.T) {
	const wave = `wave "w" {}
agent "cx" { kind = "claude" }
repo "app" {
  path = "."
  ux { url = "http://127.0.0.1:8080/" }
}
lot "page" {
  repo    = repo.app
  brief   = "x"
  visible = true
}
lot "menu" {
  repo    = repo.app
  brief   = "x"
  visible = true
}
lot "other" {
  repo         = repo.app
  brief        = "x"
  visible      = true
  review_agent = agent.cx
}
lot "hidden" {
  repo  = repo.app
  brief = "x"
}
lot "skipped" {
  repo    = repo.app
  brief   = "x"
  visible = true
  ux      = false
}
`
	good := fakeMachine{RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}, AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328"}}
	bm := browserlessMachine{good, map[string]int{}}
	for _, tc := range []struct {
		name string
		m    Machine
		want []string
	}{
		{"missing", bm, []string{
			"no browser for the UX review of lots page, menu (the browser (/nonexistent) not found; install it): it will end not verified and its verdict will not be used (docs/ux.md, Install and cost)",
			"no browser for the UX review of lot other (the codex agent has no browser in cadence): it will end not verified and its verdict will not be used (docs/ux.md, Install and cost)",
		}},
		{"usable", good, nil},
		{"offline", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, diags := build(t, mustLoad(t, wave), nil, tc.m, Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			var got []string
			for _, w := range p.Warnings {
				if w.Kind == WarnNoBrowser {
					got = append(got, w.Message)
					if w.Refuses {
						t.Errorf("a no-browser warning refuses: %+v", w)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("no-browser warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	for name, n := range bm.asked {
		if n != 1 {
			t.Errorf("agent %s asked %d times, want once", name, n)
		}
	}
}
