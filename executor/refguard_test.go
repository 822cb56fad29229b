package executor

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

// TestLedgerForeign: a step's two readings of the refs, with the moves
// cadence made itself in between, give the foreign moves and where each
// ref is put back.
func TestLedgerForeign(t *testing.T) {
	const main = "refs/heads/main"
	own := func(old, new, lot string) ownMove {
		return ownMove{gitint.RefMove{Ref: main, Old: old, New: new}, lot}
	}
	for _, tc := range []struct {
		name          string
		before, after gitint.Refs
		own           []ownMove
		want          []gitint.RefMove
		onTop         map[string][]string
	}{
		{name: "nothing moved", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "X"}},
		{name: "an integration during the step", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "Y"},
			own: []ownMove{own("X", "Y", "b")}},
		{name: "two integrations", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "Z"},
			own: []ownMove{own("X", "Y", "b"), own("Y", "Z", "c")}},
		{name: "an integration undone", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "X"},
			own: []ownMove{own("X", "Y", "b"), own("Y", "X", "b")}},
		{name: "a foreign move", before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "E"},
			want: []gitint.RefMove{{Ref: main, Old: "X", New: "E"}}},
		{name: "a foreign move after an integration: back to the integration's value",
			before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "E"}, own: []ownMove{own("X", "Y", "b")},
			want: []gitint.RefMove{{Ref: main, Old: "Y", New: "E"}}},
		{name: "a foreign move that undid an integration (no net change)",
			before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "X"}, own: []ownMove{own("X", "Y", "b")},
			want: []gitint.RefMove{{Ref: main, Old: "Y", New: "X"}}},
		{name: "an integration on top of a foreign move",
			before: gitint.Refs{main: "X"}, after: gitint.Refs{main: "Y"}, own: []ownMove{own("E", "Y", "b")},
			want: []gitint.RefMove{{Ref: main, Old: "X", New: "Y"}}, onTop: map[string][]string{main: {"b"}}},
		{name: "created and deleted refs", before: gitint.Refs{main: "X", "refs/tags/v1": "T"},
			after: gitint.Refs{main: "X", "refs/heads/tmp": "N"},
			want:  []gitint.RefMove{{Ref: "refs/heads/tmp", New: "N"}, {Ref: "refs/tags/v1", Old: "T"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Moves recorded before the step's first reading do not count.
			rl := &repoLedger{moves: []ownMove{own("W", "X", "old")}}
			rl.moves = append(rl.moves, tc.own...)
			got, onTop := rl.foreign(tc.before, tc.after, 1)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("foreign = %+v, want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(onTop, tc.onTop) {
				t.Errorf("onTop = %v, want %v", onTop, tc.onTop)
			}
		})
	}
}

// TestSessionMovesRef: an agent session that moves a guarded ref (here
// the base) is an incident: the ref is put back, the session's step and
// the lot fail naming the ref and the rescue ref, no review runs, and the
// run's result carries the incident.
func TestSessionMovesRef(t *testing.T) {
	h := newHarness(t, "wave \"w\" {}\nrepo \"r\" {\n  path = \".\"\n}\n"+agentLots("a"))
	h.git.moveRef("refs/heads/main", "base0")
	h.git.moveRef("refs/heads/cadence/w/a", "ignored")
	h.agent.script = func(s Session) (Outcome, time.Duration) {
		if s.Step == state.StepImplement {
			h.git.moveRef("refs/heads/main", "evil")
			h.git.moveRef("refs/heads/cadence/w/a", "lot's own") // never guarded
		}
		return Outcome{Status: state.StepOK, Report: &Report{Summary: "ok", Verdict: "fine"}}, time.Millisecond
	}
	res, err := h.run(context.Background(), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []gitint.RefMove{{Ref: "refs/heads/main", Old: "base0", New: "evil"}}
	if !reflect.DeepEqual(h.git.restored, want) {
		t.Errorf("restored %+v, want %+v", h.git.restored, want)
	}
	for _, s := range []string{"lot a: during its implement step, not by cadence: in repo r, refs/heads/main moved from base0 to evil (kept under refs/cadence/rescue/w/a/1); put back to base0"} {
		if !strings.Contains(res.Incident, s) {
			t.Errorf("incident %q does not say %q", res.Incident, s)
		}
	}
	a := h.lots()["a"]
	if a.Status != state.LotFailed || !strings.Contains(a.Cause, IncidentCause) || !strings.Contains(a.Cause, "refs/cadence/rescue/w/a/1") {
		t.Errorf("lot a %s: %s", a.Status, a.Cause)
	}
	for _, s := range a.Steps {
		if s.Kind == state.StepReview {
			t.Error("a review ran after the incident")
		}
	}
	if res.Status != state.WaveInterrupted {
		t.Errorf("wave %s", res.Status)
	}
}

// remoteFake is a Git whose RemoteState returns what states says, counting
// the calls.
type remoteFake struct {
	*fakeGit
	mu    sync.Mutex
	state string
	calls int
}

func (g *remoteFake) RemoteState(ctx context.Context, _ *spec.Repo) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	if ctx.Err() != nil {
		return "" // as gitint: an ended context starts no git
	}
	return g.state
}

func (g *remoteFake) set(s string) {
	g.mu.Lock()
	g.state = s
	g.mu.Unlock()
}

// TestRemoteWatch: the remotes are read once at the start for repositories
// with command or test steps, compared only when such a step ended since
// the last comparison, and a change names the lots that ran there since
// (ended or running), once.
func TestRemoteWatch(t *testing.T) {
	cmd := &spec.Repo{Name: "cmd"}
	agentOnly := &spec.Repo{Name: "agents"}
	g := &remoteFake{fakeGit: newFakeGit(), state: "s0"}
	lr := func(id string, rp *spec.Repo, kind spec.LotKind) *lotRun {
		return &lotRun{id: id, n: &node{lot: &spec.Lot{ID: id, Repo: rp, Kind: kind}}}
	}
	a, b, c := lr("a", cmd, spec.CommandLot), lr("b", cmd, spec.CommandLot), lr("c", agentOnly, spec.AgentLot)
	r := &runner{o: Options{Git: g}}
	w := &r.remotes
	w.start(context.Background(), g, []*node{a.n, b.n, c.n})
	if g.calls != 1 || w.repos[agentOnly] != nil {
		t.Fatalf("start read %d remotes; agent-only repo watched: %v", g.calls, w.repos[agentOnly] != nil)
	}
	ctx := context.Background()
	if msg := w.compare(ctx, g, []*spec.Repo{cmd, agentOnly}); msg != "" || g.calls != 1 {
		t.Fatalf("no step ran: %q, %d calls", msg, g.calls)
	}
	w.started(a)
	w.ended(a)
	if msg := w.compare(ctx, g, []*spec.Repo{cmd}); msg != "" || g.calls != 2 {
		t.Fatalf("unchanged: %q, %d calls", msg, g.calls)
	}
	if msg := w.compare(ctx, g, []*spec.Repo{cmd}); g.calls != 2 {
		t.Fatalf("compared again with no step since: %q, %d calls", msg, g.calls)
	}
	w.started(a)
	w.ended(a)
	w.started(b) // still running
	g.set("s1")
	msg := w.compare(ctx, g, []*spec.Repo{cmd})
	if !strings.Contains(msg, "the remotes of repo cmd changed") || !strings.Contains(msg, "lot(s) a, b ran") {
		t.Fatalf("change: %q", msg)
	}
	w.ended(b)
	if msg := w.compare(ctx, g, w.all()); msg != "" {
		t.Errorf("the same push reported twice: %q", msg)
	}

	// A comparison with the run's context ended (SIGINT) compares nothing:
	// the wave's end does, whatever the context.
	w.started(a)
	w.ended(a)
	g.set("s2")
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if msg := w.compare(stopped, g, []*spec.Repo{cmd}); msg != "" {
		t.Errorf("a stopped comparison: %q", msg)
	}
	r.compareRemotesAtEnd(stopped)
	if !strings.Contains(r.incidentMsg, "at the end of the wave, the remotes of repo cmd changed") || !strings.Contains(r.incidentMsg, "lot(s) a ran") {
		t.Errorf("the wave's end: %q", r.incidentMsg)
	}

	// A wave stopped while its start read the remotes compares nothing.
	var w2 remoteWatch
	w2.start(stopped, g, []*node{a.n})
	w2.started(a)
	w2.ended(a)
	if msg := w2.compare(ctx, g, w2.all()); msg != "" {
		t.Errorf("compared against a cancelled read: %q", msg)
	}
}
