//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2EParallelSandboxed: four agent lots of one repository at once
// (parallel = 4), the default sandbox, each staging everything with
// `git add -A` and committing: every lot is integrated, no incident, the
// checkout and main clean of the sandbox's placeholders.
func TestE2EParallelSandboxed(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	scripts := map[string]fakeapi.Script{}
	more := ""
	for _, id := range []string{"a", "b", "c", "d"} {
		scripts[id+"-implement0"] = fakeapi.Script{
			fakeapi.Bash(fmt.Sprintf("echo %s > %s.txt && git add -A 2>&1 && git commit -q -m '%s: add %s.txt (%s)' 2>&1", id, id, id, id, id)),
			writeDone("added " + id + ".txt"),
		}
		scripts[id+"-review0"] = fakeapi.Script{review("conform")}
		if id != "a" {
			more += fmt.Sprintf("\nlot %q {\n  repo  = repo.app\n  title = \"Add %s\"\n  brief = \"Add %s.txt.\"\n}\n", id, id, id)
		}
	}
	e := newE2E(t, scripts, waveOpts{Wave: "  max_sessions = 4", Repo: "  parallel = 4", More: more})
	r := e.apply()
	t.Log(r.out)
	r.wantCode(t, 0)
	if strings.Contains(r.out, "INCIDENT") {
		t.Errorf("an incident:\n%s", r.out)
	}
	st := e.state()
	for _, id := range []string{"a", "b", "c", "d"} {
		l := e.lot(st, id)
		if l.Status != state.LotDone {
			t.Errorf("lot %s %s (%s)", id, l.Status, l.Cause)
			for _, req := range e.turns(id + "-implement0") {
				for _, tr := range req.ToolResults() {
					t.Logf("lot %s: tool result (error %v): %s", id, tr.IsError, tr.Text)
				}
			}
		}
		if got := e.git(e.repo, "show", "main:"+id+".txt"); got != id {
			t.Errorf("main:%s.txt = %q", id, got)
		}
	}
	if got := e.git(e.repo, "ls-tree", "-r", "--name-only", "main"); got != "README.md\na.txt\nb.txt\nc.txt\nd.txt" {
		t.Errorf("main holds:\n%s", got)
	}
	if got := e.git(e.repo, "status", "--porcelain", "--untracked-files=all", "--ignored"); got != "" {
		t.Errorf("the checkout is not clean:\n%s", got)
	}
	// The placeholders cadence made in the git dir for the sessions are
	// gone with them, and the lead's git config works.
	for _, f := range []string{"config.lock", "config.worktree", "glab-cli", "objects/info/alternates", "objects/info/commit-graphs"} {
		if _, err := os.Lstat(filepath.Join(e.repo, ".git", f)); err == nil {
			t.Errorf(".git/%s is left", f)
		}
	}
	e.git(e.repo, "config", "user.note", "after the wave")
}
