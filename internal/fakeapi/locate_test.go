package fakeapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A missing CLI fails the end-to-end tests (a skip would go unseen), unless
// CADENCE_E2E=skip says to skip them; a CADENCE_TEST_CLAUDE naming nothing
// always fails.
func TestLocateCLI(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd := filepath.Join(root, "sub")
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	p, why, skip := locateCLI(env(nil), wd)
	if p != "" || skip || !strings.Contains(why, "npm install") || !strings.Contains(why, SkipEnvVar+"=skip") {
		t.Errorf("missing CLI: path %q, skip %v, why %q", p, skip, why)
	}
	p, why, skip = locateCLI(env(map[string]string{SkipEnvVar: "skip"}), wd)
	if p != "" || !skip || !strings.HasPrefix(why, "SKIP end-to-end test: ") {
		t.Errorf("missing CLI with %s=skip: path %q, skip %v, why %q", SkipEnvVar, p, skip, why)
	}
	_, why, skip = locateCLI(env(map[string]string{CLIEnvVar: filepath.Join(root, "nope"), SkipEnvVar: "skip"}), wd)
	if skip || !strings.Contains(why, "not an executable") {
		t.Errorf("bad %s: skip %v, why %q", CLIEnvVar, skip, why)
	}
	bin := filepath.Join(root, CLIInstallDir, "node_modules", ".bin", "claude")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, why, _ := locateCLI(env(nil), wd); p != bin {
		t.Errorf("installed CLI: path %q, why %q", p, why)
	}
}
