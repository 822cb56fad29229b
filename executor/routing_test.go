package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/briefs"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// kindAdapter is an agent.Adapter for a test kind: it records what it was
// given and plays the session with a fakeAgent.
type kindAdapter struct {
	mu       sync.Mutex
	fake     *fakeAgent
	agents   []string // agent names of its sessions
	commands []string // Host.Command of its sessions
}

func (k *kindAdapter) Run(ctx context.Context, s agent.Session, h agent.Host) agent.Outcome {
	k.mu.Lock()
	k.agents = append(k.agents, s.Agent.Name)
	k.commands = append(k.commands, h.Command)
	k.mu.Unlock()
	return k.fake.Run(ctx, s)
}
func (*kindAdapter) Kind() string                     { return testKind }
func (*kindAdapter) Tool() agent.Tool                 { return agent.Tool{} }
func (*kindAdapter) KillLeftovers(session string) int { return 0 }
func (*kindAdapter) Recount(string, string, string, []string) (agent.Spent, bool) {
	return agent.Spent{}, false
}

// testKind is the kind of the test's adapter, the only one of its registry.
var (
	testKind    = "routing-test-kind"
	testAdapter = &kindAdapter{}
)

// TestSessionsRouteByAgentKind runs a wave through agent.Router: the lot
// whose agent block has kind = "routing-test-kind" runs every session with
// the adapter registered under that kind, with the command the Router
// resolved; the lot of the built-in claude agent, whose kind has no adapter
// in this test binary, fails with that cause instead of running anywhere.
func TestSessionsRouteByAgentKind(t *testing.T) {
	adapters := agent.NewRegistry(testAdapter)
	dir := t.TempDir()
	src := "wave \"w\" {}\nrepo \"r\" {\n  path = \".\"\n}\n" +
		"agent \"other\" {\n  kind = \"" + testKind + "\"\n  command = \"other-cli\"\n}\n" +
		"lot \"a\" {\n  repo = repo.r\n  brief = \"do a\"\n  agent = agent.other\n}\n" +
		"lot \"b\" {\n  repo = repo.r\n  brief = \"do b\"\n}\n"
	file := filepath.Join(dir, "wave.hcl")
	os.WriteFile(file, []byte(src), 0o644)
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{AgentKinds: adapters.Kinds()})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g := newFakeGit()
	testAdapter.mu.Lock()
	testAdapter.fake, testAdapter.agents, testAdapter.commands = &fakeAgent{git: g}, nil, nil
	testAdapter.mu.Unlock()
	p, diags := planner.Build(planner.Input{Config: cfg, Options: planner.Options{Jobs: 2}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	statePath := filepath.Join(dir, "wave.state.json")
	store, err := state.OpenStore(statePath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	bs, _ := briefs.Load("")
	router := &agent.Router{Adapters: adapters, Command: func(a *spec.Agent) string { return "/resolved/" + a.Command }}
	res, err := Run(context.Background(), Options{Config: cfg, Plan: p, Store: store, Agent: router, Git: g, Briefs: bs,
		Layout: layout.New(filepath.Join(dir, "wave.hcl"), cfg.Wave.Name, filepath.Join(dir, "home")), MaxSessions: p.Totals.MaxSessions, Jobs: p.Totals.Jobs,
		Env: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := state.Read(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Lots["a"]; a == nil || a.Status != state.LotDone {
		t.Errorf("lot a (kind %s): %+v; result %+v", testKind, a, res)
	}
	if b := st.Lots["b"]; b == nil || b.Status != state.LotFailed || !strings.Contains(b.Cause, `no agent adapter for kind "claude"`) {
		t.Errorf("lot b (kind claude, no adapter here): %+v", b)
	}
	testAdapter.mu.Lock()
	defer testAdapter.mu.Unlock()
	if len(testAdapter.agents) < 2 || len(testAdapter.fake.spans) != len(testAdapter.agents) {
		t.Fatalf("the adapter ran %d session(s) of %v; want implement and review of lot a", len(testAdapter.agents), testAdapter.agents)
	}
	for i, name := range testAdapter.agents {
		if name != "other" || testAdapter.commands[i] != "/resolved/other-cli" || testAdapter.fake.spans[i].lot != "a" {
			t.Errorf("session %d: agent %s command %s lot %s", i, name, testAdapter.commands[i], testAdapter.fake.spans[i].lot)
		}
	}
}
