package guard

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadence-run/cadence/spec"
)

// remoteFake is a Git whose RemoteState returns what states says, counting
// the calls (its other methods are not called).
type remoteFake struct {
	Git
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

// TestRemoteWatch: the remotes are read once at the start for the
// repositories of command or test steps (executor's shellRepos picks them), compared only when such a step ended since
// the last comparison, and a change names the lots that ran there since
// (ended or running), once.
func TestRemoteWatch(t *testing.T) {
	cmd := &spec.Repo{Name: "cmd"}
	agentOnly := &spec.Repo{Name: "agents"}
	g := &remoteFake{state: "s0"}
	lot := func(id string, rp *spec.Repo) Lot {
		return Lot{ID: id, Repos: []Repo{{Repo: rp}}}
	}
	a, b := lot("a", cmd), lot("b", cmd)
	gd := New(g, "w", nil)
	w := &gd.remotes
	w.start(context.Background(), g, []*spec.Repo{cmd})
	if g.calls != 1 || w.repos[agentOnly] != nil {
		t.Fatalf("start read %d remotes; agent-only repo watched: %v", g.calls, w.repos[agentOnly] != nil)
	}
	ctx := context.Background()
	if msg, _ := w.compare(ctx, g, []*spec.Repo{cmd, agentOnly}); msg != "" || g.calls != 1 {
		t.Fatalf("no step ran: %q, %d calls", msg, g.calls)
	}
	w.started(a)
	w.ended(a)
	if msg, _ := w.compare(ctx, g, []*spec.Repo{cmd}); msg != "" || g.calls != 2 {
		t.Fatalf("unchanged: %q, %d calls", msg, g.calls)
	}
	if msg, _ := w.compare(ctx, g, []*spec.Repo{cmd}); g.calls != 2 {
		t.Fatalf("compared again with no step since: %q, %d calls", msg, g.calls)
	}
	w.started(a)
	w.ended(a)
	w.started(b) // still running
	g.set("s1")
	msg, lots := w.compare(ctx, g, []*spec.Repo{cmd})
	if !strings.Contains(msg, "the remotes of repo cmd changed") || !strings.Contains(msg, "lot(s) a, b ran") || !slices.Equal(lots, []string{"a", "b"}) {
		t.Fatalf("change: %q, lots %q", msg, lots)
	}
	w.ended(b)
	if msg, _ := w.compare(ctx, g, w.all()); msg != "" {
		t.Errorf("the same push reported twice: %q", msg)
	}

	// A comparison with the run's context ended (SIGINT) compares nothing:
	// the wave's end does, whatever the context.
	w.started(a)
	w.ended(a)
	g.set("s2")
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if msg, _ := w.compare(stopped, g, []*spec.Repo{cmd}); msg != "" {
		t.Errorf("a stopped comparison: %q", msg)
	}
	end := gd.CompareAllRemotes(context.WithoutCancel(stopped))
	if !strings.Contains(end, "the remotes of repo cmd changed") || !strings.Contains(end, "lot(s) a ran") {
		t.Errorf("the wave's end: %q", end)
	}

	// A wave stopped while its start read the remotes compares nothing.
	var w2 remoteWatch
	w2.start(stopped, g, []*spec.Repo{cmd})
	w2.started(a)
	w2.ended(a)
	if msg, _ := w2.compare(ctx, g, w2.all()); msg != "" {
		t.Errorf("compared against a cancelled read: %q", msg)
	}
}

// localFake is a Git whose LocalRemoteState and RemoteState return what
// local and state say.
type localFake struct {
	remoteFake
	local string
}

func (g *localFake) LocalRemoteState(context.Context, *spec.Repo) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.local
}

// TestRemoteWatchAfterStep: what the remotes show without network is
// compared after every step: a change after a command step is reported
// once, naming what changed, and the full record follows (the next
// comparison before an integration finds nothing new); after a session
// it is only recorded; suspects are held once.
func TestRemoteWatchAfterStep(t *testing.T) {
	ctx := context.Background()
	rp := &spec.Repo{Name: "app"}
	g := &localFake{remoteFake: remoteFake{state: "s0"}, local: "refs/remotes/origin/main 1111\n"}
	var w remoteWatch
	w.start(ctx, g, []*spec.Repo{rp})
	w.startLocal(ctx, g, []*spec.Repo{rp})
	if got := w.afterStep(ctx, g, true); got != nil {
		t.Fatalf("nothing changed: %q", got)
	}
	g.local += "refs/remotes/origin/sneaky 2222\n"
	g.set("s1")
	got := w.afterStep(ctx, g, true)
	if len(got) != 1 || !strings.Contains(got[0], "in repo app, the remotes changed (a push): refs/remotes/origin/sneaky created at 2222") {
		t.Fatalf("a push after a command step: %q", got)
	}
	if got := w.afterStep(ctx, g, true); got != nil {
		t.Fatalf("one push reported twice: %q", got)
	}
	w.started(Lot{ID: "a", Repos: []Repo{{Repo: rp}}})
	w.ended(Lot{ID: "a", Repos: []Repo{{Repo: rp}}})
	if msg, _ := w.compare(ctx, g, []*spec.Repo{rp}); msg != "" {
		t.Fatalf("the full record did not follow: %q", msg)
	}
	g.local = "changed by a session\n"
	if got := w.afterStep(ctx, g, false); got != nil {
		t.Fatalf("after a session the change is the session's to report: %q", got)
	}
	w.suspect([]string{"b"}, "pushed?")
	if got := w.suspected("b"); !slices.Equal(got, []string{"pushed?"}) {
		t.Fatalf("suspected(b) = %q", got)
	}
	if got := w.suspected("b"); got != nil {
		t.Fatalf("a suspect is held twice: %q", got)
	}
}
