package agent

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// recorder is an Adapter of kind kind that records the sessions it is
// given.
type recorder struct {
	kind  string
	tool  Tool
	got   []Session
	hosts []Host
}

func (r *recorder) Run(_ context.Context, s Session, h Host) Outcome {
	r.got, r.hosts = append(r.got, s), append(r.hosts, h)
	return Outcome{Status: state.StepOK, Cause: "ran by " + s.Agent.Kind}
}
func (r *recorder) Kind() string             { return r.kind }
func (r *recorder) Tool() Tool               { return r.tool }
func (r *recorder) KillLeftovers(string) int { return 0 }
func (r *recorder) Recount(string, string, string, []string) (Spent, bool) {
	return Spent{}, false
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

func TestRegistry(t *testing.T) {
	a, b := &recorder{kind: "zeta"}, &recorder{kind: "alpha"}
	reg := NewRegistry(a, b)
	if got, ok := reg.Lookup("zeta"); !ok || got != a {
		t.Errorf("Lookup(zeta) = %v, %v", got, ok)
	}
	if _, ok := reg.Lookup("beta"); ok {
		t.Error("Lookup(beta) found an adapter")
	}
	if got := reg.Kinds(); !reflect.DeepEqual(got, []string{"alpha", "zeta"}) {
		t.Errorf("Kinds() = %v", got)
	}
	if got := reg.Adapters(); len(got) != 2 || got[0] != b || got[1] != a {
		t.Errorf("Adapters() = %v, want alpha's then zeta's", got)
	}
	mustPanic(t, "twice", func() { NewRegistry(a, &recorder{kind: "zeta"}) })
	mustPanic(t, "empty kind", func() { NewRegistry(&recorder{}) })
	mustPanic(t, "nil adapter", func() { NewRegistry(a, nil) })
	var none *Registry
	if _, ok := none.Lookup("zeta"); ok || none.Kinds() != nil {
		t.Error("a nil registry has adapters")
	}
}

func TestCommand(t *testing.T) {
	reg := NewRegistry(&recorder{kind: "kk", tool: Tool{EnvOverride: "KK_BIN"}}, &recorder{kind: "plain"})
	env := map[string]string{"KK_BIN": "/opt/kk"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name string
		a    spec.Agent
		env  func(string) string
		want string
	}{
		{"the kind's own agent takes the override", spec.Agent{Name: "kk", Kind: "kk", Command: "kk"}, getenv, "/opt/kk"},
		{"another agent of the kind does not", spec.Agent{Name: "mine", Kind: "kk", Command: "kk-beta"}, getenv, "kk-beta"},
		{"override unset", spec.Agent{Name: "kk", Kind: "kk", Command: "kk"}, func(string) string { return "" }, "kk"},
		{"no environment", spec.Agent{Name: "kk", Kind: "kk", Command: "kk"}, nil, "kk"},
		{"a kind without override", spec.Agent{Name: "plain", Kind: "plain", Command: "plain"}, getenv, "plain"},
		{"an unregistered kind", spec.Agent{Name: "x", Kind: "x", Command: "x"}, getenv, "x"},
	} {
		if got := reg.Command(&tc.a, tc.env); got != tc.want {
			t.Errorf("%s: Command = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRouter checks that a session goes to the adapter of its agent's kind,
// with the router's host and the command it resolved, and that a kind with
// no adapter is a failed outcome that names it.
func TestRouter(t *testing.T) {
	one, two := &recorder{kind: "one"}, &recorder{kind: "two"}
	r := &Router{Adapters: NewRegistry(one, two), Host: Host{Env: []string{"A=1"}, Command: "ignored"},
		Command: func(a *spec.Agent) string { return "/bin/" + a.Command }}
	out := r.Run(context.Background(), Session{Lot: "L1", Agent: &spec.Agent{Name: "n", Kind: "two", Command: "two-cli"}})
	if out.Status != state.StepOK || out.Cause != "ran by two" || len(one.got) != 0 || len(two.got) != 1 {
		t.Fatalf("out %+v; one ran %d, two ran %d", out, len(one.got), len(two.got))
	}
	if h := two.hosts[0]; h.Command != "/bin/two-cli" || !reflect.DeepEqual(h.Env, []string{"A=1"}) || two.got[0].Lot != "L1" {
		t.Errorf("host %+v session %+v", h, two.got[0])
	}
	r.Command = nil
	r.Run(context.Background(), Session{Agent: &spec.Agent{Kind: "one", Command: "one-cli"}})
	if len(one.got) != 1 || one.hosts[0].Command != "one-cli" {
		t.Errorf("without a resolver the agent's command runs: %+v", one.hosts)
	}
	for _, a := range []*spec.Agent{{Name: "c", Kind: "claude"}, nil} {
		out = r.Run(context.Background(), Session{Agent: a})
		if out.Status != state.StepFailed || !strings.Contains(out.Cause, "no agent adapter for kind") {
			t.Errorf("agent %+v: %+v", a, out)
		}
	}
}

func TestMarkEnv(t *testing.T) {
	got := MarkEnv(Session{Wave: "w", Lot: "L1", SessionID: "id"})
	if want := []string{"CADENCE_WAVE=w", "CADENCE_LOT=L1", "CADENCE_SESSION=id"}; !reflect.DeepEqual(got, want) {
		t.Errorf("MarkEnv = %v", got)
	}
}

func TestConform(t *testing.T) {
	var nilReport *Report
	for _, tc := range []struct {
		r    *Report
		want bool
	}{
		{nilReport, false},
		{&Report{}, true},
		{&Report{Findings: []state.Finding{{Severity: "minor"}}}, true},
		{&Report{Findings: []state.Finding{{Severity: "minor"}, {Severity: "major"}}}, false},
		{&Report{Findings: []state.Finding{{Severity: "blocking"}}}, false},
	} {
		if got := tc.r.Conform(); got != tc.want {
			t.Errorf("%+v: Conform = %v", tc.r, got)
		}
	}
}

// TestRegistryDefaultCommand: an agent of a kind that sets no command runs
// the command its adapter names (Tool.Command), else the kind's name;
// a kind with no adapter gives "".
func TestRegistryDefaultCommand(t *testing.T) {
	reg := NewRegistry(&recorder{kind: "gem", tool: Tool{Command: "gemini-cli"}}, &recorder{kind: "plain"})
	for kind, want := range map[string]string{"gem": "gemini-cli", "plain": "plain", "none": ""} {
		if got := reg.DefaultCommand(kind); got != want {
			t.Errorf("DefaultCommand(%q) = %q, want %q", kind, got, want)
		}
	}
}
