package claude

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/gitdirs"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// fakeBin makes a folder holding executable scripts named like the keys.
func fakeBin(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSandboxMissing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, goos string
		bin        map[string]string
		want       string // a part of the answer; "" for none
	}{
		{"not linux", "darwin", map[string]string{"bwrap": "exit 0", "socat": "exit 0"}, "not Linux"},
		{"neither", "linux", nil, "bubblewrap (bwrap) and socat not found on PATH"},
		{"no socat", "linux", map[string]string{"bwrap": "exit 0"}, "socat not found on PATH (Debian/Ubuntu: apt-get install bubblewrap socat)"},
		{"no bwrap", "linux", map[string]string{"socat": "exit 0"}, "bubblewrap (bwrap) not found"},
		{"no namespaces", "linux", map[string]string{"socat": "exit 0", "bwrap": "echo 'bwrap: No permissions to create a new namespace' >&2; exit 1"},
			"bubblewrap cannot start a sandbox here (bwrap: No permissions to create a new namespace)"},
		{"silent failure", "linux", map[string]string{"socat": "exit 0", "bwrap": "exit 3"}, "(exit status 3)"},
		{"works", "linux", map[string]string{"socat": "exit 0", "bwrap": `[ "$1" = --new-session ] && [ "$(eval echo \${$#})" = true ]`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sandboxMissing(ctx, tc.goos, fakeBin(t, tc.bin))
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSandboxMissingCached: the adapter asks once per PATH.
func TestSandboxMissingCached(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	bin := fakeBin(t, map[string]string{"socat": "exit 0", "bwrap": "echo x >> " + count})
	var a Adapter
	env := []string{"PATH=" + bin}
	for range 3 {
		if got := a.SandboxMissing(context.Background(), env); got != "" {
			t.Fatalf("missing: %s", got)
		}
	}
	if b, _ := os.ReadFile(count); strings.Count(string(b), "x") != 1 {
		t.Errorf("bwrap ran %d times", strings.Count(string(b), "x"))
	}
	if got := a.SandboxMissing(context.Background(), []string{"PATH=" + t.TempDir()}); !strings.Contains(got, "not found") {
		t.Errorf("another PATH: %q", got)
	}
}

// TestSandboxMissingHere is the real answer of this machine, where CI
// installs bubblewrap and socat (.ci/run).
func TestSandboxMissingHere(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("no bwrap here")
	}
	if got := (&Adapter{}).SandboxMissing(context.Background(), os.Environ()); got != "" && os.Getenv("CI") != "" {
		t.Errorf("CI has bubblewrap but: %s", got)
	} else {
		t.Logf("sandbox missing: %q", got)
	}
}

// gitRepo makes a repository with one commit and linked worktrees named
// like wts (next to it), and returns its folder.
func gitRepo(t *testing.T, dir string, wts ...string) string {
	t.Helper()
	repo := filepath.Join(dir, "repo")
	gittest.Git(t, dir, "init", "-q", "-b", "main", repo)
	gittest.Commit(t, repo, "init", map[string]string{"README": "r\n"})
	for _, w := range wts {
		gittest.Git(t, repo, "worktree", "add", "-q", "-b", "b-"+w, filepath.Join(dir, w))
	}
	return repo
}

func TestMainWorktree(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	repo := gitRepo(t, dir, "wt")
	if _, common, err := gitdirs.Read(filepath.Join(dir, "wt")); err != nil || mainWorktree(common) != repo {
		t.Errorf("main worktree of %q: %q, %v", common, mainWorktree(common), err)
	}
}

// TestSandboxSettings: the writable paths are the lot's worktrees and
// their git dirs, less what must stay read-only; bare file tools become
// rules for the worktrees.
func TestSandboxSettings(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	app := gitRepo(t, filepath.Join(dir), "lot", "other")
	libDir := filepath.Join(dir, "l")
	os.Mkdir(libDir, 0o755)
	lib := gitRepo(t, libDir, "lotlib")
	os.Mkdir(filepath.Join(app, ".git", "cadence"), 0o755)
	a := &spec.Agent{Name: "claude", Kind: "claude", Settings: &Settings{PermissionMode: "acceptEdits",
		AllowedTools: []string{"Bash", "Edit", "Write", "Read"}}}
	s := agent.Session{Agent: a, Model: "opus", SessionID: "id", Step: state.StepImplement, ReportSchema: state.StepImplement.ReportSchema(),
		Dir: filepath.Join(dir, "lot"), AddDirs: []string{filepath.Join(libDir, "lotlib")},
		DenyHosts: []string{"10.0.0.1", "[::1]", "github.com", "gitserver", "gitlab.example", "localhost"},
		DenyRead:  []string{"/home/u/.cadence/keys"}}
	cache := filepath.Join(dir, "cache")
	args, err := Args(s, false, &Sandbox{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(args, "--settings")
	if i < 0 {
		t.Fatalf("no --settings: %q", args)
	}
	if j := slices.Index(args, "--allowedTools"); j < 0 || args[j+1] != "Bash Read" {
		t.Errorf("allowed tools %q", args)
	}
	var st settings
	if err := json.Unmarshal([]byte(args[i+1]), &st); err != nil {
		t.Fatal(err)
	}
	sb := st.Sandbox
	if !sb.Enabled || !sb.FailIfUnavailable || !sb.AutoAllowBashIfSandboxed || sb.AllowUnsandboxedCommands || !slices.Equal(sb.Network.AllowedDomains, []string{"*"}) {
		t.Errorf("sandbox %+v", sb)
	}
	// A single-label host is not an entry the CLI takes.
	if want := []string{"10.0.0.1", "[::1]", "github.com", "gitlab.example", "localhost"}; !slices.Equal(sb.Network.DeniedDomains, want) {
		t.Errorf("deniedDomains %q, want the remotes' hosts %q", sb.Network.DeniedDomains, want)
	}
	appGit, libGit := filepath.Join(app, ".git"), filepath.Join(lib, ".git")
	wantAllow := []string{filepath.Join(dir, "lot"), filepath.Join(appGit, "worktrees", "lot"), appGit,
		filepath.Join(libDir, "lotlib"), filepath.Join(libGit, "worktrees", "lotlib"), libGit, cache}
	if !slices.Equal(sb.Filesystem.AllowWrite, wantAllow) {
		t.Errorf("allowWrite\n%q, want\n%q", sb.Filesystem.AllowWrite, wantAllow)
	}
	deny := sb.Filesystem.DenyWrite
	for _, want := range []string{
		filepath.Join(dir, "lot", ".git"), filepath.Join(appGit, "worktrees", "lot", "gitdir"), filepath.Join(appGit, "worktrees", "lot", "commondir"),
		filepath.Join(appGit, "HEAD"), filepath.Join(appGit, "index"), filepath.Join(appGit, "config"), filepath.Join(appGit, "hooks"),
		filepath.Join(appGit, "info"), filepath.Join(appGit, "cadence"), filepath.Join(appGit, "worktrees", "other"),
		filepath.Join(libGit, "config"), filepath.Join(libGit, "hooks"), filepath.Join(libGit, "HEAD"),
	} {
		if !slices.Contains(deny, want) {
			t.Errorf("denyWrite lacks %s", want)
		}
	}
	for _, not := range []string{filepath.Join(appGit, "worktrees", "lot"), filepath.Join(libGit, "cadence"), filepath.Join(appGit, "remotes")} {
		if slices.Contains(deny, not) {
			t.Errorf("denyWrite has %s", not)
		}
	}
	// The steering keys: unreadable by sandboxed commands and the Read tool.
	if !slices.Equal(sb.Filesystem.DenyRead, []string{"/home/u/.cadence/keys"}) ||
		!slices.Equal(st.Permissions.Deny, []string{"Read(//home/u/.cadence/keys/**)"}) {
		t.Errorf("denyRead %q, deny rules %q: want the keys folder", sb.Filesystem.DenyRead, st.Permissions.Deny)
	}
	wantEdits := []string{"Edit(/" + filepath.Join(dir, "lot") + "/**)", "Edit(/" + filepath.Join(libDir, "lotlib") + "/**)"}
	if !slices.Equal(st.Permissions.Allow, wantEdits) || !strings.HasPrefix(wantEdits[0], "Edit(//") {
		t.Errorf("permissions %q, want %q", st.Permissions.Allow, wantEdits)
	}

	// An agent without file tools gets no file rules; one that does not
	// allow Bash outright does not get it through the sandbox. No remote
	// host: no deniedDomains key (the CLI would then change its handling
	// of project settings' network values).
	a.Settings.(*Settings).AllowedTools = []string{"Bash"}
	s.DenyHosts = nil
	args, _ = Args(s, false, &Sandbox{})
	if got := args[slices.Index(args, "--settings")+1]; strings.Contains(got, "Edit(") || strings.Contains(got, "deniedDomains") {
		t.Errorf("file rules without file tools, or denied hosts without remotes: %s", got)
	}
	a.Settings.(*Settings).AllowedTools = []string{"Bash(go test:*)", "Edit"}
	args, _ = Args(s, false, &Sandbox{})
	if got := args[slices.Index(args, "--settings")+1]; !strings.Contains(got, `"autoAllowBashIfSandboxed":false`) {
		t.Errorf("Bash allowed through the sandbox: %s", got)
	}
}

// TestSandboxedDecision: a session runs in the sandbox unless its agent
// turns it off or the machine cannot run it.
func TestSandboxedDecision(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is used on Linux only")
	}
	ok := fakeBin(t, map[string]string{"socat": "exit 0", "bwrap": "exit 0"})
	on, off := &spec.Agent{Kind: "claude"}, &spec.Agent{Kind: "claude", NoSandbox: true}
	for _, tc := range []struct {
		name  string
		agent *spec.Agent
		dir   string
		path  string
		want  bool
	}{
		{"on", on, "/w", ok, true},
		{"sandbox = false", off, "/w", ok, false},
		{"no bwrap", on, "/w", t.TempDir(), false},
		{"no folder", on, "", ok, false},
	} {
		var a Adapter
		if got := a.sandboxed(context.Background(), agent.Session{Agent: tc.agent, Dir: tc.dir}, []string{"PATH=" + tc.path}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
