package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// TestSetupOncePerWorktree: a lot's setup runs in a worktree the run
// makes; a resumed lot whose worktree is there and whose setup the state
// records ok is not set up again; one whose setup did not end ok is.
func TestSetupOncePerWorktree(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	h := newHarness(t, fmt.Sprintf(`wave "w" {}
repo "r" {
  path  = "."
  setup = "echo $CADENCE_LOT >> %s"
}
lot "fresh" {
  repo = repo.r
  run  = "true"
}
lot "resumed" {
  repo = repo.r
  run  = "true"
}
lot "unfinished" {
  repo = repo.r
  run  = "true"
}
`, count))
	started := time.Now().UTC()
	seed := map[string]state.StepStatus{"resumed": state.StepOK, "unfinished": state.StepInterrupted}
	store, err := state.OpenStore(filepath.Join(h.dir, "wave.state.json"))
	if err != nil {
		t.Fatal(err)
	}
	for id, st := range seed {
		wt := filepath.Join(h.dir, "wt-"+id)
		if err := os.MkdirAll(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := store.UpdateLot(id, func(l *state.Lot) {
			l.Status, l.Worktree = state.LotInterrupted, wt
			l.Setup = &state.Setup{Status: st, Started: started}
		}); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	if _, err := h.run(context.Background(), planner.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"fresh", "resumed", "unfinished"} {
		if st := h.status(id); st != state.LotDone {
			t.Errorf("lot %s: %s (%s)", id, st, h.lots()[id].Cause)
		}
	}
	b, _ := os.ReadFile(count)
	ran := strings.Fields(string(b))
	if len(ran) != 2 || strings.Contains(string(b), "resumed") || !strings.Contains(string(b), "fresh") || !strings.Contains(string(b), "unfinished") {
		t.Errorf("setup ran for %q, want fresh and unfinished once each", ran)
	}
	if s := h.lots()["fresh"].Setup; s == nil || s.Status != state.StepOK {
		t.Errorf("fresh's setup record: %+v", s)
	}
}
