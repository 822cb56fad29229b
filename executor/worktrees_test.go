package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

const twoRepos = `wave "w" {}
repo "r" {
  path = "."
}
repo "lib" {
  path = "lib"
}
lot "c" {
  repo = repo.r
  also = [repo.lib]
  brief = "do c"
}
`

// A new lot's worktree is made under the cadence home, outside the wave
// file's folder (and so outside a repository that holds it), and the state
// records it; a neighbour's worktree is beside it.
func TestWorktreeUnderHome(t *testing.T) {
	h := newHarness(t, twoRepos)
	if res, err := h.run(context.Background(), planner.Options{}); err != nil || res.Status != state.WaveDone {
		t.Fatalf("%+v %v", res, err)
	}
	wt := h.lots()["c"].Worktree
	if !strings.HasPrefix(wt, filepath.Join(h.dir, "home", "worktrees")+string(filepath.Separator)) || filepath.Base(wt) != "c" {
		t.Fatalf("worktree %q, want one under the home's worktrees folder", wt)
	}
	for _, d := range []string{wt, wt + "@lib"} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("worktree %s was not made: %v", d, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, ".cadence", "worktrees")); err == nil {
		t.Error("a worktree folder was made beside the wave file")
	}
}

// A lot whose state records a worktree gets that one (and its neighbour's
// beside it), wherever it is: a change of the home or of the layout's
// scheme loses no worktree.
func TestWorktreeFromState(t *testing.T) {
	h := newHarness(t, twoRepos)
	recorded := filepath.Join(h.dir, "old-layout", "c")
	store, err := state.OpenStore(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.UpdateLot("c", func(l *state.Lot) { l.Worktree = recorded }); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if res, err := h.run(context.Background(), planner.Options{}); err != nil || res.Status != state.WaveDone {
		t.Fatalf("%+v %v", res, err)
	}
	if got := h.lots()["c"].Worktree; got != recorded {
		t.Errorf("state records %q, want %q", got, recorded)
	}
	for _, d := range []string{recorded, recorded + "@lib"} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("worktree %s was not made: %v", d, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "home", "worktrees")); err == nil {
		t.Error("a worktree was made under the home as well")
	}
}
