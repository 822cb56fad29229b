package claude

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// sandboxMess makes in w what the sandbox leaves after a SIGKILL, and what
// an agent may have written there.
func sandboxMess(t *testing.T, w string) {
	t.Helper()
	for _, d := range []string{".claude/.cc-writes", ".claude/skills", ".vscode"} {
		os.MkdirAll(filepath.Join(w, d), 0o755)
	}
	for _, f := range []string{".bashrc", ".mcp.json", ".claude/settings.json"} {
		os.WriteFile(filepath.Join(w, f), nil, 0o644)
	}
}

func exists(w, rel string) bool {
	_, err := os.Lstat(filepath.Join(w, rel))
	return err == nil
}

func TestLeftoversRemovedWhenAbsentBefore(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	gitRepo(t, dir, "wt")
	w := filepath.Join(dir, "wt")
	path := os.Getenv("PATH")
	var l leftovers
	end := l.begin([]root{{path: w}}, path, nil)
	sandboxMess(t, w)
	// The agent's own: a file with content under .claude/, an empty file
	// it committed, an empty file that is no placeholder.
	os.MkdirAll(filepath.Join(w, ".claude", "commands"), 0o755)
	os.WriteFile(filepath.Join(w, ".claude", "commands", "x.md"), []byte("mine\n"), 0o644)
	os.WriteFile(filepath.Join(w, ".gitmodules"), nil, 0o644)
	os.WriteFile(filepath.Join(w, "empty.txt"), nil, 0o644)
	git := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@t", "add", ".gitmodules")
	git.Dir = w
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	end()
	for _, gone := range []string{".claude/.cc-writes", ".claude/skills", ".claude/settings.json", ".vscode", ".bashrc", ".mcp.json"} {
		if exists(w, gone) {
			t.Errorf("%s is left", gone)
		}
	}
	for _, kept := range []string{".claude/commands/x.md", ".gitmodules", "empty.txt"} {
		if !exists(w, kept) {
			t.Errorf("%s was removed", kept)
		}
	}
}

func TestLeftoversClaudeFolderGoesWhenEmpty(t *testing.T) {
	w := t.TempDir()
	var l leftovers
	end := l.begin([]root{{path: w}}, os.Getenv("PATH"), nil)
	os.MkdirAll(filepath.Join(w, ".claude", ".cc-writes"), 0o700)
	end()
	if exists(w, ".claude") {
		t.Error(".claude is left")
	}
}

// TestLeftoversKeepWhatWasThere: what existed before the session stays,
// even when it is empty and a placeholder's name.
func TestLeftoversKeepWhatWasThere(t *testing.T) {
	w := t.TempDir()
	os.MkdirAll(filepath.Join(w, ".claude"), 0o755)
	os.WriteFile(filepath.Join(w, ".profile"), nil, 0o644)
	var l leftovers
	end := l.begin([]root{{path: w}}, os.Getenv("PATH"), nil)
	os.MkdirAll(filepath.Join(w, ".claude", ".cc-writes"), 0o700)
	end()
	if !exists(w, ".claude") || !exists(w, ".profile") {
		t.Error("a folder or file that was there before is gone")
	}
	if exists(w, ".claude/.cc-writes") {
		t.Error(".claude/.cc-writes is left")
	}
}

// TestLeftoversLastSessionCleans: a folder two sessions share (the main
// worktree) is cleaned when the last one ends, against what was there when
// the first began.
func TestLeftoversLastSessionCleans(t *testing.T) {
	w := t.TempDir()
	var l leftovers
	end1 := l.begin([]root{{path: w}}, "", nil)
	os.MkdirAll(filepath.Join(w, ".claude", ".cc-writes"), 0o700)
	end2 := l.begin([]root{{path: w}}, "", nil)
	end1()
	if !exists(w, ".claude/.cc-writes") {
		t.Fatal("cleaned while a session still runs")
	}
	end2()
	if exists(w, ".claude") {
		t.Error(".claude is left after the last session")
	}
}

func TestSandboxRoots(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	repo := gitRepo(t, dir, "wt")
	got := sandboxRoots([]string{filepath.Join(dir, "wt"), filepath.Join(dir, "none")})
	want := []root{{path: filepath.Join(dir, "wt")}, {path: repo}, {path: filepath.Join(repo, ".git"), gitDir: true, common: true},
		{path: filepath.Join(repo, ".git", "worktrees", "wt"), gitDir: true}, {path: filepath.Join(dir, "none")}}
	if !slices.Equal(got, want) {
		t.Errorf("roots %v, want %v", got, want)
	}
}

// TestLeftoversInGitDir: the placeholders the sandbox leaves in a git dir
// go; what git keeps there, empty or not, stays.
func TestLeftoversInGitDir(t *testing.T) {
	g := t.TempDir()
	os.MkdirAll(filepath.Join(g, "objects", "info"), 0o755)
	os.WriteFile(filepath.Join(g, "config"), []byte("[core]\n"), 0o644)
	var l leftovers
	end := l.begin([]root{{path: g, gitDir: true}}, "", nil)
	for _, d := range []string{"glab-cli", "remotes", "info/.claude-sandbox-noreplace", "objects/info/.claude-sandbox-noreplace", "objects/info/commit-graphs/.claude-sandbox-noreplace"} {
		os.MkdirAll(filepath.Join(g, d), 0o755)
	}
	for _, f := range []string{"config.worktree", "objects/info/alternates"} {
		os.WriteFile(filepath.Join(g, f), nil, 0o644)
	}
	os.WriteFile(filepath.Join(g, "info", "exclude"), nil, 0o644) // git's own
	end()
	for _, gone := range []string{"glab-cli", "remotes", "config.worktree", "objects/info/alternates", "objects/info/commit-graphs", "info/.claude-sandbox-noreplace"} {
		if exists(g, gone) {
			t.Errorf("%s is left", gone)
		}
	}
	for _, kept := range []string{"config", "info/exclude", "objects/info"} {
		if !exists(g, kept) {
			t.Errorf("%s was removed", kept)
		}
	}
}

// The first session of a repository makes the placeholders of its common
// git dir before it starts (so that no CLI takes them for its own and
// removes them under another session's Bash call); the last one to end
// removes them, and what existed before stays.
func TestLeftoversPrecreateCommon(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	repo := gitRepo(t, dir, "wt")
	common := filepath.Join(repo, ".git")
	os.WriteFile(filepath.Join(common, "glab-cli"), []byte("mine\n"), 0o644)
	var l leftovers
	roots := sandboxRoots([]string{filepath.Join(dir, "wt")})
	end1 := l.begin(roots, os.Getenv("PATH"), nil)
	end2 := l.begin(roots, os.Getenv("PATH"), nil)
	for _, c := range []string{"config.lock", "config.worktree", "objects/info/alternates", "objects/info/commit-graphs/.claude-sandbox-noreplace"} {
		if fi, err := os.Lstat(filepath.Join(common, c)); err != nil || fi.Size() != 0 {
			t.Errorf("%s not made empty before the session: %v", c, err)
		}
	}
	end1()
	if !exists(common, "config.lock") {
		t.Error("config.lock removed while a session of the repository still runs")
	}
	end2()
	for _, c := range []string{"config.lock", "config.worktree", "objects/info/alternates", "objects/info/commit-graphs"} {
		if exists(common, c) {
			t.Errorf("%s left after the last session", c)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(common, "glab-cli")); string(b) != "mine\n" {
		t.Errorf("glab-cli = %q", b)
	}
}
