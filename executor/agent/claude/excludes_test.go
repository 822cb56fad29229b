package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sandboxed session's excludes file holds the user's own excludes and
// then the placeholders, anchored; its entries continue the environment's
// GIT_CONFIG_* entries.
func TestExcludesEnv(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "git", "ignore"), []byte("*.swp"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1", "GIT_CONFIG_KEY_1=c.d", "GIT_CONFIG_VALUE_1=2"}
	got := excludesEnv(context.Background(), env, dir, filepath.Join(dir, "1-implement"))
	p := filepath.Join(dir, "sandbox-excludes")
	want := []string{"GIT_CONFIG_KEY_2=core.excludesFile", "GIT_CONFIG_VALUE_2=" + p, "GIT_CONFIG_COUNT=3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("env %v, want %v", got, want)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"*.swp\n", "\n/.bash_profile\n", "\n/.claude/settings.json\n"} {
		if !strings.Contains(string(b), line) {
			t.Errorf("excludes file without %q:\n%s", line, b)
		}
	}
	if !strings.HasPrefix(string(b), "*.swp\n") {
		t.Errorf("the user's excludes do not come first:\n%s", b)
	}
}
