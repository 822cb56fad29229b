package step_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/state"
)

// TestSandboxWritable: a folder the lot's sandbox_writable names is
// writable in its box, but what cadence keeps inside it stays read-only
// (the wave file and the state's journal and requests beside it, the
// wave's .cadence folder, the cadence home's slots, the worktrees folder
// with the other lots' worktrees, every repository's checkout and git
// dir), while the lot still commits in its own worktree inside them. A
// folder inside cadence's own keeps the step from starting.
func TestSandboxWritable(t *testing.T) {
	w := newBoxWave(t)
	shared := filepath.Join(w.root, "shared")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	waveDir := filepath.Dir(w.wave.File())
	if err := os.MkdirAll(filepath.Join(waveDir, ".cadence", "w"), 0o700); err != nil {
		t.Fatal(err)
	}
	attacks := map[string]string{
		"journal":     "echo forged >> " + w.wave.Journal(),
		"requests":    "echo stop > " + filepath.Join(w.wave.Requests(), "forged"),
		"wave file":   "echo >> " + w.wave.File(),
		"work folder": "touch " + filepath.Join(waveDir, ".cadence", "w", "forged"),
		"slots":       "rm " + filepath.Join(w.cadenceHome, "slots", "slot-0"),
		"lot b":       "touch " + filepath.Join(w.wt["b"], "forged"),
		"checkout":    "echo edit > " + filepath.Join(w.app, "f"),
		"hooks":       "touch " + filepath.Join(w.other, ".git", "hooks", "pre-commit"),
		"refs":        fmt.Sprintf("git -C %s -c core.hooksPath=/dev/null update-ref refs/heads/main %s", w.other, w.otherPrev),
	}
	var script []string
	for name, cmd := range attacks {
		script = append(script, fmt.Sprintf("if (%s) 2>/dev/null; then echo 'ESCAPED: %s'; fi", cmd, name))
	}
	script = append(script, "echo built > "+filepath.Join(shared, "out"),
		"echo hi > g && git add g && git -c core.hooksPath=/dev/null commit -q -m 'a: add g'")
	res := w.runCtx(context.Background(), t, strings.Join(script, "\n"), false, w.root)
	if res.Status != state.StepOK || strings.Contains(res.Output, "ESCAPED") {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Cause, res.Output)
	}
	if got := read(t, filepath.Join(shared, "out")); got != "built\n" {
		t.Errorf("the writable folder holds %q", got)
	}
	if h := gittest.Git(t, w.app, "rev-parse", "cadence/w/a"); h == w.starts["a"] {
		t.Errorf("lot a's commit did not land on its branch")
	}
	if got := read(t, w.wave.Journal()); got != "{\"lot\":\"a\"}\n" {
		t.Errorf("the journal reads %q", got)
	}

	res = w.runCtx(context.Background(), t, "true", false, filepath.Join(w.cadenceHome, "slots"))
	if res.Status != state.StepInterrupted || !res.Unstarted || !strings.Contains(res.Cause, "is inside") {
		t.Errorf("a writable folder in the cadence home: status %s, unstarted %v: %s; want the step not started", res.Status, res.Unstarted, res.Cause)
	}
}
