//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// TestE2EPlaceholdersAttacked: two sandboxed sessions of one repository
// side by side; lot a's session attacks the placeholders cadence made in
// the git dir: fills objects/info/alternates (the objects folder is
// writable in the sandbox), deletes config.lock, swaps config.worktree for
// a symlink, and writes a commit-graph chain into the objects/info/
// commit-graphs folder. Nothing of it may be left in the repository after
// the wave (the commit-graph is moved aside under cadence/rescue and the
// journal says so), and lot b's work must be integrated.
func TestE2EPlaceholdersAttacked(t *testing.T) {
	needSandbox(t)
	g := `"$(git rev-parse --path-format=absolute --git-common-dir)"`
	scripts := map[string]fakeapi.Script{
		"a-implement0": {
			fakeapi.Bash("echo /tmp/evil-objects >> " + g + "/objects/info/alternates; echo rc=$?"),
			fakeapi.Bash("rm -f " + g + "/config.lock; echo rc=$?"),
			fakeapi.Bash("mv " + g + "/config.worktree " + g + "/objects/cw; ln -s /etc/passwd " + g + "/config.worktree; echo rc=$?"),
			fakeapi.Bash("printf '%040d\\n' 0 > " + g + "/objects/info/commit-graphs/commit-graph-chain; echo rc=$?"),
			commit("a.txt", "a"),
			writeDone("added a.txt"),
		},
		"a-review0": {review("conform")},
		"b-implement0": {
			commit("b.txt", "b"),
			writeDone("added b.txt"),
		},
		"b-review0": {review("conform")},
	}
	more := "\nlot \"b\" {\n  repo  = repo.app\n  title = \"Add b\"\n  brief = \"Add b.txt.\"\n}\n"
	e := newE2E(t, scripts, waveOpts{Wave: "  max_sessions = 2", Repo: "  parallel = 2", More: more})
	r := e.apply()
	t.Log(r.out)
	for _, req := range e.turns("a-implement0") {
		for _, tr := range req.ToolResults() {
			t.Logf("lot a: tool result (error %v): %s", tr.IsError, tr.Text)
		}
	}
	st := e.state()
	if l := e.lot(st, "b"); l.Status != state.LotDone {
		t.Errorf("lot b %s (%s)", l.Status, l.Cause)
	}
	for _, f := range []string{"config.lock", "config.worktree", "objects/info/alternates", "objects/info/commit-graphs", "objects/cw"} {
		if fi, err := os.Lstat(filepath.Join(e.repo, ".git", f)); err == nil {
			b, _ := os.ReadFile(filepath.Join(e.repo, ".git", f))
			t.Errorf(".git/%s is left (%v, %q)", f, fi.Mode(), strings.TrimSpace(string(b)))
		}
	}
	if b, err := os.ReadFile(filepath.Join(e.repo, ".git", "objects", "info", "commit-graphs", "commit-graph-chain")); err == nil {
		t.Errorf("the session's commit-graph-chain is in the user's repository: %q", b)
	}
	if _, err := os.Stat(filepath.Join(e.repo, ".git", "cadence", "rescue", "sandbox", "commit-graphs-1", "commit-graph-chain")); err != nil {
		t.Errorf("the session's commit-graph-chain was not kept aside: %v", err)
	}
	r.wantOut(t, "a sandboxed session wrote the commit-graph file")
	out, _ := exec.Command("git", "-C", e.repo, "log", "--oneline", "-1").CombinedOutput()
	t.Logf("git log in the lead's checkout after the wave: %s", out)
	e.git(e.repo, "config", "user.note", "after the wave")
	e.git(e.repo, "fsck", "--connectivity-only")
}
