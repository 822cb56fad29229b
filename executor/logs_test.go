package executor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/planner"
)

// TestReplaceSetsAsideLogs: -replace numbers the lot's steps from 0 again,
// so the earlier run's step files go to replaced-<k> and none of them is
// found under the new run's step numbers (cadence logs lists a step's files
// by StepGlob).
func TestReplaceSetsAsideLogs(t *testing.T) {
	h := newHarness(t, `
wave "w" {}
lot "c" {
  run = "if [ -f again ]; then :; else echo first run; exit 1; fi"
}
`)
	lay := layout.New(filepath.Join(h.dir, "wave.hcl"), "w", "")
	ctx := context.Background()
	if _, err := h.run(ctx, planner.Options{}); err != nil {
		t.Fatal(err)
	}
	if st := h.status("c"); st != state.LotFailed {
		t.Fatalf("first run: lot c is %s, want failed", st)
	}
	old := lay.StepFile("c", 0, string(state.StepRun), ".log")
	if b, err := os.ReadFile(old); err != nil || string(b) != "first run\n" {
		t.Fatalf("first run's log %s: %q, %v", old, b, err)
	}
	// The second run is silent: it makes no log file of its own.
	os.WriteFile(filepath.Join(h.dir, "again"), nil, 0o644)
	for k := 1; k <= 2; k++ {
		if _, err := h.run(ctx, planner.Options{Replace: []string{"c"}}); err != nil {
			t.Fatal(err)
		}
		if st := h.status("c"); st != state.LotDone {
			t.Fatalf("replaced run %d: lot c is %s, want done", k, st)
		}
		if steps := h.lots()["c"].Steps; len(steps) != 1 {
			t.Fatalf("replaced run %d: %d steps, want 1", k, len(steps))
		}
		if m, _ := filepath.Glob(lay.StepGlob("c", 0)); len(m) != 0 {
			t.Errorf("replaced run %d: step 0 shows the earlier run's files %v", k, m)
		}
	}
	moved := filepath.Join(lay.ReplacedDir("c", 1), "0-run.log")
	if b, err := os.ReadFile(moved); err != nil || string(b) != "first run\n" {
		t.Errorf("the first run's log is not kept in %s: %q, %v", moved, b, err)
	}
	// The second run left no file: nothing to set aside, no replaced-2.
	if _, err := os.Stat(lay.ReplacedDir("c", 2)); err == nil {
		t.Errorf("%s made for a run without files", lay.ReplacedDir("c", 2))
	}
}
