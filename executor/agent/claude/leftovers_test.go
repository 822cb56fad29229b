package claude

import (
	"os"
	"os/exec"
	"path/filepath"
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
	end := l.begin([]string{w}, path)
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
	end := l.begin([]string{w}, os.Getenv("PATH"))
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
	end := l.begin([]string{w}, os.Getenv("PATH"))
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
	end1 := l.begin([]string{w}, "")
	os.MkdirAll(filepath.Join(w, ".claude", ".cc-writes"), 0o700)
	end2 := l.begin([]string{w}, "")
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
	want := []string{filepath.Join(dir, "wt"), repo, filepath.Join(dir, "none")}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("roots %q, want %q", got, want)
	}
}
