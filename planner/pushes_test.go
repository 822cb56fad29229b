package planner

import (
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
)

// sandboxWave has an agent lot in api (agent claude), an agent lot of an
// agent without its sandbox in web and, through also, in api, a command lot
// in ops, and a done lot alone in docs.
const sandboxWave = `wave "w" {}
agent "nobox" {
  sandbox = false
}
repo "api" { path = "." }
repo "web" { path = "." }
repo "ops" { path = "." }
repo "docs" { path = "." }
repo "idle" { path = "." }
lot "a" {
  repo  = repo.api
  brief = "x"
}
lot "b" {
  repo  = repo.web
  agent = agent.nobox
  also  = [repo.docs]
  brief = "x"
}
lot "c" {
  repo = repo.ops
  run  = "make"
}
lot "d" {
  repo  = repo.idle
  brief = "x"
}
`

func TestPushes(t *testing.T) {
	good := RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}
	agent := AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328"}
	missing := agent
	missing.SandboxMissing = "bubblewrap (bwrap) not found"
	done := &state.State{Lots: map[string]*state.Lot{"d": {Status: state.LotDone}}}
	type want struct {
		pushes Pushes
		reason string
	}
	for _, tc := range []struct {
		name     string
		m        Machine
		repos    map[string]want
		warnings []string // the no-sandbox warnings' messages, in order
	}{
		{"sandbox usable", fakeMachine{good, agent}, map[string]want{
			"api":  {PushesPrevented, ""},
			"web":  {PushesDetected, "agent nobox: sandbox = false"},
			"ops":  {PushesDetected, "command lot c"},
			"docs": {PushesDetected, "agent nobox: sandbox = false"},
			"idle": {PushesNone, ""},
		}, []string{"agent nobox has sandbox = false: a push from its sessions (lot b) is only detected after the session, not prevented"}},
		{"sandbox missing", fakeMachine{good, missing}, map[string]want{
			"api":  {PushesDetected, "agent claude: sandbox missing: bubblewrap (bwrap) not found"},
			"web":  {PushesDetected, "agent nobox: sandbox = false"},
			"ops":  {PushesDetected, "command lot c"},
			"idle": {PushesNone, ""},
		}, []string{
			"agent claude cannot use its sandbox here (bubblewrap (bwrap) not found): a push from its sessions (lot a) is only detected after the session, not prevented",
			"agent nobox has sandbox = false: a push from its sessions (lot b) is only detected after the session, not prevented",
		}},
		{"offline", nil, map[string]want{
			"api":  {PushesUnknown, "offline: the sandbox was not checked"},
			"web":  {PushesDetected, "agent nobox: sandbox = false"},
			"ops":  {PushesDetected, "command lot c"},
			"idle": {PushesNone, ""},
		}, []string{"agent nobox has sandbox = false: a push from its sessions (lot b) is only detected after the session, not prevented"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, diags := build(t, mustLoad(t, sandboxWave), done, tc.m, Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			for _, r := range p.Repos {
				if w, ok := tc.repos[r.Name]; ok && (r.Pushes != w.pushes || r.PushesReason != w.reason) {
					t.Errorf("repo %s: pushes %q (%q), want %q (%q)", r.Name, r.Pushes, r.PushesReason, w.pushes, w.reason)
				}
			}
			var got []string
			for _, w := range p.Warnings {
				if w.Kind == WarnNoSandbox {
					got = append(got, w.Message)
					if w.Refuses || len(w.LotIDs) != 1 || w.Subject == "" {
						t.Errorf("warning %+v", w)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("no-sandbox warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.warnings, "\n"))
			}
		})
	}
}

// TestLongCommandWarnings: a pending command lot's run and a used repo's
// test too long for one argument of sh -c warn; a done lot's run does not.
func TestLongCommandWarnings(t *testing.T) {
	long := strings.Repeat("x", 140_000)
	src := `wave "w" {}
repo "api" {
  path = "."
  test = "` + long + `"
}
repo "idle" {
  path = "."
  test = "` + long + `"
}
lot "gen" {
  run = "` + long + `"
}
lot "old" {
  run = "` + long + `"
}
lot "fine" {
  repo = repo.api
  run  = "true"
}
`
	st := &state.State{Lots: map[string]*state.Lot{"old": {Status: state.LotDone}}}
	p, diags := build(t, mustLoad(t, src), st, nil, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	var got []string
	for _, w := range p.Warnings {
		if w.Kind == WarnLongCommand {
			got = append(got, w.Subject)
			if !strings.Contains(w.Message, "140,000 bytes") || !strings.Contains(w.Message, "131,071 bytes on Linux") || !strings.Contains(w.Message, "script file") {
				t.Errorf("message %q", w.Message)
			}
		}
	}
	if strings.Join(got, ",") != "gen,api" {
		t.Errorf("long-command warnings for %v, want gen and api", got)
	}
}

// TestPushesBypass: an agent with its sandbox on but permission_mode =
// "bypassPermissions" makes its repositories "detected" (its file tools
// run outside the sandbox), offline too, with a warning; sandbox = false
// says so first.
func TestPushesBypass(t *testing.T) {
	const wave = `wave "w" {}
agent "wild" {
  permission_mode = "bypassPermissions"
}
agent "wildnobox" {
  permission_mode = "bypassPermissions"
  sandbox         = false
}
repo "api" { path = "." }
repo "web" { path = "." }
lot "a" {
  repo  = repo.api
  agent = agent.wild
  brief = "x"
}
lot "b" {
  repo  = repo.web
  agent = agent.wildnobox
  brief = "x"
}
`
	good := RepoFacts{Exists: true, IsGit: true, BaseSHA: "abc"}
	agent := AgentFacts{Command: "claude", Path: "/bin/claude", Version: "2.1.328"}
	for _, m := range []Machine{fakeMachine{good, agent}, nil} {
		p, diags := build(t, mustLoad(t, wave), nil, m, Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		want := map[string]string{
			"api": `agent wild: permission_mode = "bypassPermissions" (its file tools run outside the sandbox, not confined to the worktrees)`,
			"web": "agent wildnobox: sandbox = false",
		}
		for _, r := range p.Repos {
			if r.Pushes != PushesDetected || r.PushesReason != want[r.Name] {
				t.Errorf("online %v: repo %s: pushes %q (%q), want detected (%q)", m != nil, r.Name, r.Pushes, r.PushesReason, want[r.Name])
			}
		}
		var got []string
		for _, w := range p.Warnings {
			if w.Kind == WarnNoSandbox {
				got = append(got, w.Message)
			}
		}
		if len(got) != 2 || !strings.HasPrefix(got[0], `agent wild has permission_mode = "bypassPermissions"`) || !strings.HasPrefix(got[1], "agent wildnobox has sandbox = false") {
			t.Errorf("online %v: warnings %q", m != nil, got)
		}
	}
}
