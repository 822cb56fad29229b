package executor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// vendorAdapter is an agent.Adapter of a test kind (a vendor): it plays
// each session with a fakeAgent, reports a usage of its own with raw
// usage in its own names, and records what it ran and recounted.
type vendorAdapter struct {
	kind     string
	fake     *fakeAgent
	usage    state.Usage
	mu       sync.Mutex
	ran      []string // "agent step model" of its sessions
	recounts []string // the session ids it was asked to recount
}

func (v *vendorAdapter) Run(ctx context.Context, s agent.Session, h agent.Host) agent.Outcome {
	v.mu.Lock()
	v.ran = append(v.ran, s.Agent.Name+" "+string(s.Step)+" "+s.Model)
	v.mu.Unlock()
	out := v.fake.Run(ctx, s)
	if out.Status == state.StepOK {
		out.Usage = v.usage
		out.RawUsage = map[string]int64{v.kind + "_input": v.usage.Input + v.usage.CacheRead, v.kind + "_output": v.usage.Output}
	}
	return out
}
func (v *vendorAdapter) Kind() string                   { return v.kind }
func (*vendorAdapter) Tool() agent.Tool                 { return agent.Tool{} }
func (*vendorAdapter) KillLeftovers(session string) int { return 0 }
func (v *vendorAdapter) Recount(id, _, _ string, _ []string) (agent.Spent, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.recounts = append(v.recounts, id)
	return agent.Spent{Usage: state.Usage{Input: 3, Output: 1}, CostMicros: 7, CostEstimated: true}, true
}

// vendorHarness is a harness whose wave may name agents of kinds
// "vendor-a" and "vendor-b" (and claude), and whose sessions run through
// an agent.Router over their two adapters.
func vendorHarness(t *testing.T, src string) (*harness, *vendorAdapter, *vendorAdapter, func(*Options)) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "wave.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{AgentKinds: []string{spec.AgentKindClaude, "vendor-a", "vendor-b"}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	g := newFakeGit()
	h := &harness{t: t, dir: dir, cfg: cfg, git: g, agent: &fakeAgent{git: g}}
	a := &vendorAdapter{kind: "vendor-a", fake: h.agent, usage: state.Usage{Input: 100, CacheWrite: 10, CacheRead: 1000, Output: 50}}
	b := &vendorAdapter{kind: "vendor-b", fake: h.agent, usage: state.Usage{Input: 20, CacheRead: 400, Output: 5}}
	router := &agent.Router{Adapters: agent.NewRegistry(a, b), Command: func(a *spec.Agent) string { return a.Command }}
	return h, a, b, func(o *Options) { o.Agent = router }
}

const vendorWave = `wave "w" {}
repo "r" {
  path = "."
}
agent "impl" {
  kind = "vendor-a"
}
agent "rev" {
  kind = "vendor-b"
}
lot "a" {
  repo = repo.r
  brief = "do a"
  agent = agent.impl
  review_agent = agent.rev
  model = "a-large"
  review_model = "b-small"
  precheck = true
}
`

// TestStepsRunOnTheirAgents: a lot whose implement runs on an agent of
// kind vendor-a and whose precheck and review run on one of kind
// vendor-b sends each session to its kind's adapter with its model; the
// state records each step's agent, vendor, model and raw usage, and the
// spend per vendor adds up each vendor's sessions.
func TestStepsRunOnTheirAgents(t *testing.T) {
	h, a, b, router := vendorHarness(t, vendorWave)
	res, err := h.runWith(context.Background(), planner.Options{}, router)
	if err != nil || res.Status != state.WaveDone {
		t.Fatalf("res %+v err %v", res, err)
	}
	if want := []string{"impl implement a-large"}; !slices.Equal(a.ran, want) {
		t.Errorf("vendor-a ran %q, want %q", a.ran, want)
	}
	if want := []string{"rev precheck b-small", "rev review b-small"}; !slices.Equal(b.ran, want) {
		t.Errorf("vendor-b ran %q, want %q", b.ran, want)
	}
	lots := h.lots()
	var got []string
	for _, s := range lots["a"].Steps {
		if s.Kind.Session() {
			got = append(got, string(s.Kind)+" "+s.Agent+" "+s.Vendor+" "+s.Model)
			if s.RawUsage[s.Vendor+"_output"] != s.Usage.Output || s.RawUsage[s.Vendor+"_input"] != s.Usage.Input+s.Usage.CacheRead {
				t.Errorf("%s: raw usage %v for usage %+v", s.Kind, s.RawUsage, s.Usage)
			}
		} else if s.Agent != "" || s.Vendor != "" {
			t.Errorf("%s step records agent %q vendor %q", s.Kind, s.Agent, s.Vendor)
		}
	}
	if want := []string{"precheck rev vendor-b b-small", "implement impl vendor-a a-large", "review rev vendor-b b-small"}; !slices.Equal(got, want) {
		t.Errorf("journal steps %q, want %q", got, want)
	}
	spend := state.SpendByVendor(lots)
	if len(spend) != 2 {
		t.Fatalf("spend per vendor %+v, want vendor-a and vendor-b", spend)
	}
	if spend[0].Vendor != "vendor-a" || spend[0].Sessions != 1 || spend[0].Usage != a.usage ||
		spend[1].Vendor != "vendor-b" || spend[1].Sessions != 2 || spend[1].Usage != b.usage.Add(b.usage) {
		t.Errorf("spend per vendor %+v", spend)
	}
	if c := spend[0].Usage.Counted() + spend[1].Usage.Counted(); c != 160+2*25 {
		t.Errorf("counted across vendors %d, want %d (input without cache reads + cache writes + output)", c, 160+2*25)
	}
}

// TestResumeKeepsStepAgent: a review that ran on agent rev (vendor-b)
// when cadence was killed is recounted by rev's adapter and keeps rev as
// its agent, though the wave file now reviews with impl (vendor-a), which
// runs the review again.
func TestResumeKeepsStepAgent(t *testing.T) {
	src := vendorWave + "agent \"rev2\" {\n  kind = \"vendor-a\"\n}\n"
	h, a, b, router := vendorHarness(t, strings.Replace(src, "review_agent = agent.rev", "review_agent = agent.rev2", 1))
	store, err := state.OpenStore(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	err = store.UpdateWave(func(st *state.State) { st.Wave = "w" })
	if err == nil {
		err = store.UpdateLot("a", func(l *state.Lot) {
			l.Status, l.Worktree = state.LotRunning, filepath.Join(h.dir, "wt-a")
			l.Steps = []state.Step{
				{Kind: state.StepPrecheck, Status: state.StepOK, Agent: "rev", Vendor: "vendor-b", Model: "b-small", Usage: state.Usage{Input: 1}},
				{Kind: state.StepImplement, Status: state.StepOK, Agent: "impl", Vendor: "vendor-a", Model: "a-large", Usage: state.Usage{Input: 2}},
				{Kind: state.StepTest, Status: state.StepOK},
				{Kind: state.StepReview, Status: state.StepRunning, SessionID: "sess-rev", Agent: "rev", Vendor: "vendor-b", Model: "b-small"},
			}
		})
	}
	if err == nil {
		err = store.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.runWith(context.Background(), planner.Options{}, router); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.recounts, []string{"sess-rev"}) || len(a.recounts) != 0 {
		t.Errorf("recounted by vendor-b %q, by vendor-a %q; want the killed review by vendor-b", b.recounts, a.recounts)
	}
	steps := h.lots()["a"].Steps
	if s := steps[3]; s.Agent != "rev" || s.Vendor != "vendor-b" || s.Status != state.StepInterrupted || s.Usage != (state.Usage{Input: 3, Output: 1}) {
		t.Errorf("the killed review: %+v", s)
	}
	var again []string
	for _, s := range steps[4:] {
		if s.Kind.Session() {
			again = append(again, string(s.Kind)+" "+s.Agent+" "+s.Vendor)
		}
	}
	if len(again) == 0 || again[0] != "review rev2 vendor-a" {
		t.Errorf("steps after the resume %q, want the review again on rev2 (vendor-a)", again)
	}
}

// TestCheckoutGuardPerStepAgent: the lead's checkouts are guarded around
// a step whose own agent runs outside its sandbox: a review agent with
// sandbox = false, or whose sandbox the plan found missing on this
// machine, guards the read-only steps and not the lot's sandboxed
// implement; the plan's facts are read per agent.
func TestCheckoutGuardPerStepAgent(t *testing.T) {
	for _, tc := range []struct {
		name, rev string
		missing   map[string]planner.AgentFacts
	}{
		{"sandbox off", "agent \"rev\" {\n  kind = \"vendor-b\"\n  sandbox = false\n}\n", nil},
		{"sandbox missing", "agent \"rev\" {\n  kind = \"vendor-b\"\n}\n", map[string]planner.AgentFacts{"impl": {}, "rev": {SandboxMissing: "no bwrap"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(vendorWave, "agent \"rev\" {\n  kind = \"vendor-b\"\n}\n", tc.rev, 1)
			h, _, _, _ := vendorHarness(t, src)
			lr := &lotRun{n: &node{lot: h.cfg.Lot("a")}, r: &runner{o: Options{Plan: &planner.Plan{Agents: tc.missing}}}}
			for kind, want := range map[state.StepKind]bool{state.StepImplement: false, state.StepFix: false,
				state.StepPrecheck: true, state.StepReview: true, state.StepRecheck: true, state.StepTest: true} {
				if got := lr.guardsCheckout(kind); got != want {
					t.Errorf("%s: guards the checkout %v, want %v", kind, got, want)
				}
			}
		})
	}
}
