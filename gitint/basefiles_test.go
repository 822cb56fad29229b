package gitint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestBaseFiles(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir, c.Env = dir, append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, ".nvmrc"), []byte("22\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "x"), nil, 0o644)
	git("add", ".")
	git("commit", "-qm", "init")
	git("checkout", "-qb", "other")
	os.WriteFile(filepath.Join(dir, ".nvmrc"), []byte("20\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "mise.toml"), []byte("[tools]\n"), 0o644)
	git("add", ".")
	git("commit", "-qm", "other")
	got, err := tgit().BaseFiles(context.Background(), dir, "main", []string{".nvmrc", "mise.toml", "sub", ".tool-versions"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[".nvmrc"]) != "22\n" || len(got) != 1 {
		t.Errorf("base files %q", got)
	}
	if _, err := tgit().BaseFiles(context.Background(), dir, "main", []string{"a\nb"}); err == nil {
		t.Error("a name with a newline was read")
	}
}
