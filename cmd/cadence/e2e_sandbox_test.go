//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent/claude"
	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
)

// needSandbox fails the test (skips it with CADENCE_E2E=skip) when Claude
// Code's sandbox cannot run here: CI installs bubblewrap and socat
// (.ci/run).
func needSandbox(t *testing.T) {
	t.Helper()
	fakeapi.FindCLI(t)
	if why := (&claude.Adapter{}).SandboxMissing(context.Background(), os.Environ()); why != "" {
		if os.Getenv(fakeapi.SkipEnvVar) == "skip" {
			t.Skip("SKIP sandbox end-to-end test: " + why)
		}
		t.Fatal("Claude Code's sandbox cannot run here: " + why + " (or set " + fakeapi.SkipEnvVar + "=skip)")
	}
}

// cleanGate is a test gate that fails when the lot's worktree holds
// anything but committed work: what the sandbox leaves (.claude/, its
// placeholder dotfiles) included, ignored files too.
const cleanGate = `test = "test ! -e .claude && test -z \"$(git status --porcelain --ignored --untracked-files=all)\""`

// editWave replaces the first old in the wave file by new.
func (e *e2e) editWave(old, new string) {
	e.t.Helper()
	b, err := os.ReadFile(e.wave)
	if err != nil || !strings.Contains(string(b), old) {
		e.t.Fatalf("wave file without %q (%v)", old, err)
	}
	e.writeFile(e.wave, strings.Replace(string(b), old, new, 1))
}

// TestE2ESandbox: with the sandbox on (the default), a Bash call cannot
// write outside the lot's worktree, even when it asks to leave the
// sandbox; the file tools cannot either; a commit in the lot's worktree
// works; the lot ends done with its worktree clean of the sandbox's
// leftovers (the test gate checks it) and the repository's checkout too.
func TestE2ESandbox(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	outside := t.TempDir()
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {
			fakeapi.Bash("touch " + outside + "/bash.txt"),
			fakeapi.ToolUse("Bash", map[string]any{"command": "touch " + outside + "/unsandboxed.txt",
				"description": "Run a command", "dangerouslyDisableSandbox": true}),
			fakeapi.Write(outside+"/write.txt", "x\n"),
			fakeapi.Bash("git config --file \"$(git rev-parse --git-common-dir)/config\" sandbox.escaped yes"),
			commit("f.txt", "f"),
			// Build tools have a cache of their own, writable: $HOME is not.
			fakeapi.Bash(`d=$(go env GOCACHE) && mkdir -p "$d" && touch "$d/cadence-probe" && echo "cache $d"`),
			writeDone("added f.txt"),
		},
		"a-review0": {review("conform")},
	}, waveOpts{})
	e.editWave(`test = "true"`, cleanGate)
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	reqs := e.turns("a-implement0")
	if len(reqs) < 7 {
		t.Fatalf("%d implement requests", len(reqs))
	}
	// The repository's config is read-only in the sandbox; git fails on
	// the lock file first (the sandbox's placeholder for config.lock).
	for i, want := range []string{"Read-only file system", "Read-only file system", "Claude requested permissions to write", "could not lock config file"} {
		tr := reqs[i+1].ToolResults()
		res := tr[len(tr)-1]
		t.Logf("call %d → error %v: %s", i+1, res.IsError, res.Text)
		if !res.IsError || !strings.Contains(res.Text, want) {
			t.Errorf("call %d: want an error with %q, got %s", i+1, want, res.Text)
		}
	}
	for _, f := range []string{"bash.txt", "unsandboxed.txt", "write.txt"} {
		if _, err := os.Stat(filepath.Join(outside, f)); err == nil {
			t.Errorf("%s was written outside the worktree", f)
		}
	}
	if cfg, _ := os.ReadFile(filepath.Join(e.repo, ".git", "config")); strings.Contains(string(cfg), "escaped") {
		t.Errorf("the repository's config was changed:\n%s", cfg)
	}
	if tr := reqs[5].ToolResults(); tr[len(tr)-1].IsError {
		t.Errorf("the commit failed: %s", tr[len(tr)-1].Text)
	}
	if tr := reqs[6].ToolResults(); tr[len(tr)-1].IsError || !strings.Contains(tr[len(tr)-1].Text, "cache /") {
		t.Errorf("the Go build cache is not writable: %s", tr[len(tr)-1].Text)
	} else {
		t.Logf("go build cache: %s", tr[len(tr)-1].Text)
	}
	a := e.lot(e.state(), "a")
	if a.Status != state.LotDone || len(stepsOf(a, state.StepImplement)) != 1 || len(stepsOf(a, state.StepImplement)[0].Commits) != 1 {
		t.Fatalf("lot a %s (%s), steps %s", a.Status, a.Cause, steps(a))
	}
	if got := e.git(e.repo, "show", "main:f.txt"); got != "f" {
		t.Errorf("main:f.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(e.repo, ".claude")); err == nil {
		t.Error("the repository's checkout has a .claude folder")
	}
	if got := e.git(e.repo, "status", "--porcelain", "--untracked-files=all"); got != "" {
		t.Errorf("the repository's checkout is not clean:\n%s", got)
	}
	// What the sandbox leaves in the git dir goes too.
	for _, f := range []string{"glab-cli", "config.worktree", "remotes", "objects/info/alternates", "info/.claude-sandbox-noreplace"} {
		if _, err := os.Stat(filepath.Join(e.repo, ".git", f)); err == nil {
			t.Errorf(".git/%s is left", f)
		}
	}
}

// TestE2ESandboxNeighbour: a lot with a neighbour repository (also)
// commits in both worktrees from the sandbox; the neighbour's git config
// and hooks stay read-only; both bases get the work and neither checkout
// keeps the sandbox's leftovers.
func TestE2ESandboxNeighbour(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {
			commit("f.txt", "f"),
			fakeapi.Bash("cd ../a@lib && echo l > l.txt && git add l.txt && git commit -q -m 'a: add l.txt (a)'"),
			fakeapi.Bash("cd ../a@lib && touch \"$(git rev-parse --git-common-dir)/hooks/pre-commit\""),
			fakeapi.Bash("cd ../a@lib && git config --file \"$(git rev-parse --git-common-dir)/config\" sandbox.escaped yes"),
			writeDone("added f.txt and l.txt"),
		},
		"a-review0": {review("conform")},
	}, waveOpts{Lot: "  also = [repo.lib]", More: `
repo "lib" {
  path = "lib"
  test = "true"
}
`})
	lib := filepath.Join(e.dir, "lib")
	e.git(e.dir, "init", "-q", "-b", "main", lib)
	e.writeFile(filepath.Join(lib, "README.md"), "# lib\n")
	e.git(lib, "add", "README.md")
	e.git(lib, "commit", "-qm", "init")
	r := e.apply()
	r.wantCode(t, 0)
	reqs := e.turns("a-implement0")
	if len(reqs) < 5 {
		t.Fatalf("%d implement requests", len(reqs))
	}
	// The neighbour's config is read-only, and its config.lock exists
	// while sessions of the repository run (cadence makes the sandbox's
	// placeholders first): git cannot even lock it.
	for i, want := range []string{"", "Read-only file system", "could not lock config file"} {
		tr := reqs[i+2].ToolResults()
		res := tr[len(tr)-1]
		t.Logf("call %d → error %v: %s", i+2, res.IsError, res.Text)
		if want == "" && res.IsError || want != "" && (!res.IsError || !strings.Contains(res.Text, want)) {
			t.Errorf("call %d: want %q, got error %v: %s", i+2, want, res.IsError, res.Text)
		}
	}
	if cfg, _ := os.ReadFile(filepath.Join(lib, ".git", "config")); strings.Contains(string(cfg), "escaped") {
		t.Errorf("the neighbour's config was changed:\n%s", cfg)
	}
	if _, err := os.Stat(filepath.Join(lib, ".git", "config.lock")); err == nil {
		t.Error("the neighbour's config.lock is left")
	}
	if got := e.git(lib, "show", "main:l.txt"); got != "l" {
		t.Errorf("lib main:l.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(lib, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was planted in the neighbour repository")
	}
	for _, repo := range []string{e.repo, lib} {
		if _, err := os.Stat(filepath.Join(repo, ".claude")); err == nil {
			t.Errorf("%s has a .claude folder", repo)
		}
	}
}

// pushForm is one way a session may try to push; cmd gets the paths of
// the configured remote (origin) and of a bare repository that is no
// remote of the repository.
type pushForm struct {
	name string
	cmd  func(origin, other string) string
	// remote is true when the push goes to the configured remote (the
	// remote comparison after the session sees it).
	remote bool
}

// pushForms is the push matrix's rows. The CLI's own deny rule
// (Bash(git push:*)) is a soft guard that `git -C . push`
// passes; the rows but the first pass it so as to test the guards behind
// it.
var pushForms = []pushForm{
	{"git push origin (as is)", func(o, x string) string { return "git push origin HEAD:refs/heads/m0" }, true},
	{"git push origin", func(o, x string) string { return "git -C . push origin HEAD:refs/heads/m1" }, true},
	{"--no-verify", func(o, x string) string { return "git -C . push --no-verify origin HEAD:refs/heads/m2" }, true},
	{"-c core.hooksPath=/dev/null", func(o, x string) string {
		return "git -c core.hooksPath=/dev/null -C . push origin HEAD:refs/heads/m3"
	}, true},
	{"absolute path", func(o, x string) string {
		return "git -c core.hooksPath=/dev/null -C . push " + o + " HEAD:refs/heads/m4"
	}, true},
	{"file:// URL", func(o, x string) string {
		return "git -c core.hooksPath=/dev/null -C . push file://" + o + " HEAD:refs/heads/m5"
	}, true},
	{"git send-pack", func(o, x string) string { return "git send-pack " + o + " HEAD:refs/heads/m6" }, true},
	{"env -u CADENCE_WAVE GIT_CONFIG_COUNT", func(o, x string) string {
		return "env -u CADENCE_WAVE -u GIT_CONFIG_COUNT git -C . push origin HEAD:refs/heads/m7"
	}, true},
	{"a bare repo that is no remote", func(o, x string) string {
		return "git -c core.hooksPath=/dev/null -C . push " + x + " HEAD:refs/heads/m8"
	}, false},
	{"-c remote.origin.pushurl=… --no-verify", func(o, x string) string {
		return "git -c core.hooksPath=/dev/null -c remote.origin.pushurl=" + o + " -C . push --no-verify origin HEAD:refs/heads/m9"
	}, true},
	{"env -u GIT_CONFIG_COUNT, from the lead's checkout", func(o, x string) string {
		return `env -u GIT_CONFIG_COUNT git -C "$(git rev-parse --path-format=absolute --git-common-dir)/.." push origin HEAD:refs/heads/m10`
	}, true},
	{"git send-pack to a bare repo that is no remote", func(o, x string) string { return "git send-pack " + x + " HEAD:refs/heads/m11" }, false},
}

// pushCell is how one push form ended, sandbox on or off.
type pushCell struct {
	reached  bool   // a bare repository changed
	detected bool   // the wave stopped on an incident
	by       string // what refused it, from the tool's output
	exit     int
}

func (c pushCell) String() string {
	switch {
	case c.reached && c.detected:
		return "detected (reached the remote; the wave stopped on an incident)"
	case c.reached:
		return "REACHED, not detected"
	default:
		return "prevented (" + c.by + ")"
	}
}

// TestE2EPushMatrix runs every push form from an agent session, with the
// sandbox on and off (agent attribute sandbox = false), against a
// repository whose origin is a bare repository on this machine, and logs
// a line per cell (form × sandbox → prevented / detected / reached).
// Sandbox on: no bare repository changes, and the lot is done. Sandbox
// off: a push that reaches the configured remote is detected (the wave
// stops on an incident); the rest is only logged (prevention without the
// sandbox is other guards' work).
func TestE2EPushMatrix(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	for _, sandbox := range []bool{true, false} {
		for _, f := range pushForms {
			name := fmt.Sprintf("%s/sandbox=%v", f.name, sandbox)
			t.Run(strings.NewReplacer(" ", "_", "/", "_").Replace(name), func(t *testing.T) {
				t.Parallel()
				c := runPushCell(t, f, sandbox)
				t.Logf("push matrix | %-48s | sandbox %-5v | %s", f.name, sandbox, c)
				switch {
				case sandbox && c.reached:
					t.Errorf("sandbox on: the push reached a bare repository")
				case sandbox && c.exit != 0:
					t.Errorf("sandbox on: exit %d, want 0 (the lot done)", c.exit)
				case !sandbox && c.reached && f.remote && !c.detected:
					t.Errorf("sandbox off: a push to the configured remote was not detected")
				}
			})
		}
	}
}

// runPushCell runs one cell of the push matrix: a session commits, runs
// the form, and reports done.
func runPushCell(t *testing.T, f pushForm, sandbox bool) pushCell {
	t.Helper()
	remotes := t.TempDir()
	origin, other := filepath.Join(remotes, "origin.git"), filepath.Join(remotes, "other.git")
	for _, r := range []string{origin, other} {
		if out, err := exec.Command("git", "init", "-q", "--bare", r).CombinedOutput(); err != nil {
			t.Fatalf("git init --bare: %v\n%s", err, out)
		}
	}
	opts := waveOpts{}
	if !sandbox {
		opts.Agent = "  sandbox = false"
	}
	cmd := f.cmd(origin, other)
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": {commit("f.txt", "f"), fakeapi.Bash(cmd), writeDone("added f.txt")},
		"a-review0":    {review("conform")},
	}, opts)
	e.git(e.repo, "remote", "add", "origin", origin)
	e.git(e.repo, "push", "-q", "origin", "main")
	e.git(e.repo, "push", "-q", other, "main")
	before := refsOf(t, origin) + refsOf(t, other)
	r := e.apply()
	c := pushCell{exit: r.code}
	c.reached = refsOf(t, origin)+refsOf(t, other) != before
	c.detected = r.code != 0 && strings.Contains(r.out, "INCIDENT")
	reqs := e.turns("a-implement0")
	if len(reqs) < 3 {
		t.Fatalf("%d implement requests", len(reqs))
	}
	tr := reqs[2].ToolResults()
	res := tr[len(tr)-1]
	t.Logf("%s → error %v: %s", cmd, res.IsError, res.Text)
	c.by = refusedBy(res.Text)
	return c
}

// refusedBy names the guard that refused a push, from the tool's output.
func refusedBy(out string) string {
	for _, g := range []struct{ text, by string }{
		{"has been denied", "the CLI's deny rule"},
		{"cadence-no-push", "git guard"},
		{"no push during wave", "git guard"},
		{"Read-only file system", "sandbox"},
		{"unable to create temporary object directory", "sandbox"},
		{"unpacker error", "sandbox"},
	} {
		if strings.Contains(out, g.text) {
			return g.by
		}
	}
	return "refused: " + firstLineOf(strings.TrimSpace(out))
}

// refsOf lists the refs of a bare repository.
func refsOf(t *testing.T, repo string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "for-each-ref", "--format=%(refname) %(objectname)").CombinedOutput()
	if err != nil {
		t.Fatalf("git for-each-ref: %v\n%s", err, out)
	}
	return string(out)
}

// TestE2ESandboxDeniedHosts: the hosts of the repository's remotes (an
// https URL and an scp-like one, under .invalid: no real network is
// needed, the CLI's proxy refuses before any connection) are denied to
// the session's sandboxed commands, git and curl alike, a push with git's
// guards lifted too; another host is not denied (it fails for want of a
// network, not by the deny list); the fake API, which the CLI reaches from
// its own process, stays reachable (the session ends done).
func TestE2ESandboxDeniedHosts(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	cmds := []string{
		"git -c core.hooksPath=/dev/null -C . ls-remote https://git.cadence.invalid/x/y",
		// git's guards lifted: a repository of its own, no guard config.
		`cd "$TMPDIR" && git init -q p && cd p && git -c user.name=a -c user.email=a@a commit -q --allow-empty -m x && ` +
			"env -u GIT_CONFIG_COUNT git -C . push https://git.cadence.invalid/x/y HEAD:refs/heads/m",
		"curl -sS -m 30 -o /dev/null https://scp.cadence.invalid/",
		"curl -sS -m 30 -o /dev/null https://other.cadence.invalid/",
	}
	script := fakeapi.Script{commit("f.txt", "f")}
	for _, c := range cmds {
		script = append(script, fakeapi.Bash(c))
	}
	e := newE2E(t, map[string]fakeapi.Script{
		"a-implement0": append(script, writeDone("added f.txt")),
		"a-review0":    {review("conform")},
	}, waveOpts{})
	e.git(e.repo, "remote", "add", "origin", "https://git.cadence.invalid/x/y.git")
	e.git(e.repo, "remote", "add", "up", "git@SCP.cadence.invalid:x/y.git")
	r := e.apply()
	r.wantCode(t, 0)
	r.wantOut(t, `Wave "w": 1 of 1 lots done`)
	reqs := e.turns("a-implement0")
	if len(reqs) < len(cmds)+2 {
		t.Fatalf("%d implement requests", len(reqs))
	}
	for i, c := range cmds {
		tr := reqs[i+2].ToolResults()
		res := tr[len(tr)-1]
		t.Logf("%s → error %v: %s", c, res.IsError, res.Text)
		denied := strings.Contains(res.Text, "403") || strings.Contains(res.Text, "deny list")
		switch {
		case !res.IsError:
			t.Errorf("%s succeeded", c)
		case strings.Contains(c, "other.") && denied:
			t.Errorf("%s: a host that is no remote's is denied", c)
		case !strings.Contains(c, "other.") && !denied:
			t.Errorf("%s: not refused by the deny list", c)
		}
	}
}
