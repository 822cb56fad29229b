package gitint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreHooks: a planted hook leaves the hooks folder for the lot's
// rescue folder, a changed one is set aside and put back, a deleted one
// put back, an empty placeholder is no change; nothing is deleted.
func TestRestoreHooks(t *testing.T) {
	common := t.TempDir()
	hooks := filepath.Join(common, "hooks")
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(hooks, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	write("post-merge", "lead's\n")
	write("post-commit", "lead's too\n")
	before, err := ReadHooks(common, []string{hooks, filepath.Join(common, "absent")})
	if err != nil {
		t.Fatal(err)
	}
	write("pre-commit", "planted\n")
	write("post-merge", "changed\n")
	write("prepare-commit-msg", "")
	write("pre-commit.sample", "not a hook git runs\n")
	if err := os.Remove(filepath.Join(hooks, "post-commit")); err != nil {
		t.Fatal(err)
	}
	got := RestoreHooks(before, "w", "a")
	var said []string
	for _, c := range got {
		if c.Err != nil {
			t.Errorf("%s: %v", c.Path, c.Err)
		}
		said = append(said, c.String())
	}
	if len(got) != 3 {
		t.Fatalf("RestoreHooks = %q, want 3 changes (post-commit, post-merge, pre-commit)", said)
	}
	rescue := ConfigRescueDir(common, "w", "a")
	for path, want := range map[string]string{
		filepath.Join(hooks, "post-merge"):         "lead's\n",
		filepath.Join(hooks, "post-commit"):        "lead's too\n",
		filepath.Join(rescue, "hook-1-post-merge"): "changed\n",
		filepath.Join(rescue, "hook-1-pre-commit"): "planted\n",
		filepath.Join(hooks, "prepare-commit-msg"): "",
	} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); !os.IsNotExist(err) {
		t.Errorf("the planted hook is still in the hooks folder (%v)", err)
	}
	if !strings.Contains(said[2], "was planted") || !strings.Contains(said[2], "no longer runs") {
		t.Errorf("the planted hook is said as %q", said[2])
	}
}
