//go:build unix

package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi/openai"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2ECodexPushMatrix runs every push form of the Claude Code matrix
// (pushForms) from a Codex session, with Codex's sandbox on and off
// (agent attribute sandbox = false), against a repository whose origin is
// a bare repository on this machine, and logs a line per cell (form ×
// sandbox → prevented, by what / detected / reached). Each sandbox mode is
// one wave whose implement session runs every form in turn, each pushing
// its own branch (m0, m1, …): which forms reached a bare repository is
// read per branch, what refused the others from each command's output.
// The remote comparison after the session is per repository, not per
// form: a form that reached the remote is detected when the wave stopped
// on an incident. Sandbox on: no bare repository changes, and the lot is
// done. Sandbox off: a push that reaches the configured remote is
// detected and nothing is integrated; one to a bare repository that is
// no remote is only logged (no layer sees it without the sandbox, as for
// Claude Code: docs/integration.md, Guards).
func TestE2ECodexPushMatrix(t *testing.T) {
	t.Parallel()
	openai.FindCLI(t)
	cells := map[bool][]pushCell{}
	for _, sandbox := range []bool{true, false} {
		t.Run(fmt.Sprintf("sandbox=%v", sandbox), func(t *testing.T) {
			cells[sandbox] = runCodexPushWave(t, sandbox)
		})
	}
	var table []string
	for i, f := range pushForms {
		if len(cells[true]) > i && len(cells[false]) > i {
			table = append(table, fmt.Sprintf("| %s | %s | %s |", f.name, cells[true][i], cells[false][i]))
		}
	}
	t.Logf("push matrix, codex sessions (form | sandbox on | sandbox off):\n%s", strings.Join(table, "\n"))
}

// runCodexPushWave runs one wave whose codex implement session commits,
// runs every push form, and reports done; it returns a cell per form.
func runCodexPushWave(t *testing.T, sandbox bool) []pushCell {
	t.Helper()
	remotes := t.TempDir()
	origin, other := filepath.Join(remotes, "origin.git"), filepath.Join(remotes, "other.git")
	for _, r := range []string{origin, other} {
		if out, err := exec.Command("git", "init", "-q", "--bare", r).CombinedOutput(); err != nil {
			t.Fatalf("git init --bare: %v\n%s", err, out)
		}
	}
	script := openai.Script{codexCommit("a", "f.txt", "f")}
	for _, f := range pushForms {
		script = append(script, openai.Exec(f.cmd(origin, other)))
	}
	script = append(script, codexDone("added f.txt"))
	o := codexOpts{waveOpts: waveOpts{Lot: "  agent = agent.codex"}}
	if !sandbox {
		o.CodexAgent = "  sandbox = false"
	}
	e := newCodexE2E(t, nil, map[string]openai.Script{"a-implement0": script, "a-review0": {codexReview("conform")}}, o)
	e.git(e.repo, "remote", "add", "origin", origin)
	e.git(e.repo, "push", "-q", "origin", "main")
	e.git(e.repo, "push", "-q", other, "main")
	base := e.git(e.repo, "rev-parse", "main")
	r := e.apply()
	incident := r.code == 1 && strings.Contains(r.out, "INCIDENT")
	reqs := e.codexTurns("a-implement0")
	if len(reqs) < len(pushForms)+2 {
		t.Fatalf("%d implement requests, want %d", len(reqs), len(pushForms)+2)
	}
	var cells []pushCell
	reachedRemote := false
	for i, f := range pushForms {
		ref := fmt.Sprintf("refs/heads/m%d", i)
		c := pushCell{exit: r.code}
		c.reached = strings.Contains(refsOf(t, origin)+refsOf(t, other), ref+" ")
		c.detected = c.reached && incident && f.remote
		out := lastToolOutput(reqs[i+2].Body)
		c.by = refusedBy(out)
		t.Logf("push matrix | %-48s | sandbox %-5v | %s\n\t%s → %s", f.name, sandbox, c, f.cmd(origin, other), outputLine(out))
		reachedRemote = reachedRemote || c.reached && f.remote
		switch {
		case sandbox && c.reached:
			t.Errorf("%s, sandbox on: the push reached a bare repository", f.name)
		case !sandbox && c.reached && f.remote && !c.detected:
			t.Errorf("%s, sandbox off: a push to the configured remote was not detected", f.name)
		}
		cells = append(cells, c)
	}
	a := e.lot(e.state(), "a")
	switch {
	case sandbox && (r.code != 0 || a.Status != state.LotDone):
		t.Errorf("sandbox on: exit %d, lot a %s (%s), want 0 and done", r.code, a.Status, a.Cause)
	case reachedRemote && e.git(e.repo, "rev-parse", "main") != base:
		t.Errorf("the wave integrated after a push reached the remote")
	case !reachedRemote && incident:
		t.Errorf("an incident without a push to the remote:\n%s", r.out)
	}
	return cells
}

// outputLine is the line of a command's output (as Codex passes it back:
// a header, then "Output:") that says why it failed: the first that names
// cadence, an error or a fatal one, else the last.
func outputLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if strings.Contains(l, "cadence") || strings.Contains(l, "error") || strings.Contains(l, "fatal") || strings.Contains(l, "Read-only") {
			return strings.TrimSpace(l)
		}
	}
	return lines[len(lines)-1]
}
