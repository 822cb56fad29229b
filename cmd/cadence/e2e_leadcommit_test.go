//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
)

// TestE2ELeadCommitsDuringSession: the lead commits on main in their
// checkout while lot a's implement session runs (the real CLI; its Bash
// call waits until the lead's commit is on main). The move was made
// outside the wave: no incident, the lead's commit stays on main, and a
// is integrated on top of it.
func TestE2ELeadCommitsDuringSession(t *testing.T) {
	fakeapi.FindCLI(t)
	wait := "i=0; until git log --format=%s main | grep -qx 'lead: mine'; do i=$((i+1)); [ $i -gt 1200 ] && exit 1; sleep 0.1; done"
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {fakeapi.Bash(wait), commit("f.txt", "f"), writeDone("added f.txt")},
		"a-review0":    {review("conform")},
	}, waveOpts{})
	p, _ := e.startUntilTurn("a-implement0", 1)
	if err := os.WriteFile(filepath.Join(e.repo, "lead.txt"), []byte("lead\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.git(e.repo, "add", "lead.txt")
	e.git(e.repo, "commit", "-qm", "lead: mine")
	r := p.wait()
	r.wantCode(t, 0)
	if strings.Contains(r.out, "INCIDENT") {
		t.Errorf("an incident for the lead's commit:\n%s", r.out)
	}
	r.wantOut(t, `refs/heads/main moved from [0-9a-f]{12} to [0-9a-f]{12} outside the wave \(the lead\?\): kept; lots rebase onto it`)
	if got := e.git(e.repo, "log", "--format=%s", "main"); got != "a: add f.txt (a)\nlead: mine\ninit" {
		t.Errorf("main's log:\n%s", got)
	}
	if got := e.git(e.repo, "status", "--porcelain"); got != "" {
		t.Errorf("the lead's checkout is not clean:\n%s", got)
	}
	if got := e.git(e.repo, "for-each-ref", "refs/cadence/rescue"); got != "" {
		t.Errorf("rescue refs: %s", got)
	}
}
