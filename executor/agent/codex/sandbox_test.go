package codex

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxMissing: the Codex adapter says its sandbox is missing where
// no bwrap is on PATH, and promises it where a bwrap that makes its
// namespaces is (this machine's, when it has one that works).
func TestSandboxMissing(t *testing.T) {
	a := New()
	if got := a.SandboxMissing(context.Background(), []string{"PATH=" + t.TempDir()}); !strings.Contains(got, "not found") {
		t.Errorf("no bwrap on PATH: %q, want it said missing", got)
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("no bwrap on this machine")
	}
	dir := t.TempDir()
	if err := os.Symlink(bwrap, filepath.Join(dir, "bwrap")); err != nil {
		t.Fatal(err)
	}
	if got := a.SandboxMissing(context.Background(), []string{"PATH=" + dir}); got != "" && !strings.Contains(got, "namespaces") {
		t.Errorf("with bwrap: %q, want no reason or a namespace one", got)
	}
}
