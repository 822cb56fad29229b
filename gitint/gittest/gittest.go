// Package gittest makes throwaway git repositories for tests, under
// t.TempDir(), with a fixed identity and no user configuration.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the environment git runs with in tests: an identity, and no
// global or system configuration.
func Env() []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=cadence test", "GIT_AUTHOR_EMAIL=test@cadence.invalid",
		"GIT_COMMITTER_NAME=cadence test", "GIT_COMMITTER_EMAIL=test@cadence.invalid",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

// Git runs git in dir and returns its trimmed output; it fails the test on
// error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Try(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Try runs git in dir and returns its trimmed combined output and error.
func Try(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// NewRepo makes a repository on branch main with one commit holding files
// (name → content), and returns its folder.
func NewRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	Git(t, dir, "init", "-q", "-b", "main")
	if len(files) == 0 {
		files = map[string]string{"README.md": "# test\n"}
	}
	Commit(t, dir, "initial commit", files)
	return dir
}

// Commit writes files (name → content) in dir and commits them.
func Commit(t testing.TB, dir, msg string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		Git(t, dir, "add", "--", name)
	}
	Git(t, dir, "commit", "-q", "-m", msg)
	return Git(t, dir, "rev-parse", "HEAD")
}

// Snapshot is what a test compares to prove nothing changed: every ref,
// the status of the given checkouts, and their files' contents.
func Snapshot(t testing.TB, repo string, checkouts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(Git(t, repo, "for-each-ref", "--format=%(refname) %(objectname)"))
	for _, c := range checkouts {
		b.WriteString("\n== " + c + "\n")
		b.WriteString(Git(t, c, "status", "--porcelain=v1", "--untracked-files=all"))
		b.WriteString(Git(t, c, "rev-parse", "HEAD"))
		filepath.WalkDir(c, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				data, _ := os.ReadFile(p)
				b.WriteString("\n" + p + "\n" + string(data))
			}
			return nil
		})
	}
	return b.String()
}
