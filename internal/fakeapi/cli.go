package fakeapi

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CLIVersion is the Claude Code version the tests are written against.
const CLIVersion = "2.1.328"

// CLIInstallDir is where CI installs the CLI, relative to the repository
// root (the folder with go.mod).
const CLIInstallDir = ".cache/claude-code"

// CLIEnvVar names the environment variable that, when set, gives the path
// of the claude binary to test with.
const CLIEnvVar = "CADENCE_TEST_CLAUDE"

// installHint tells how to get the CLI for the tests.
const installHint = "install it from the repository root with " +
	"`npm install --no-audit --no-fund --prefix " + CLIInstallDir +
	" @anthropic-ai/claude-code@" + CLIVersion + "`, or set " + CLIEnvVar +
	" to a claude binary"

// SkipEnvVar, set to "skip", skips the end-to-end tests when the CLI is
// missing instead of failing them.
const SkipEnvVar = "CADENCE_E2E"

// FindCLI returns the path of the claude binary for end-to-end tests:
// $CADENCE_TEST_CLAUDE if set, else
// <repo root>/.cache/claude-code/node_modules/.bin/claude, the repo root
// being the nearest folder above the working directory that has go.mod.
// When the binary is missing the test fails, naming the install command
// (go test hides the output of passing packages, so a skip would go
// unseen and CI could pass without the end-to-end tests); with
// CADENCE_E2E=skip in the environment it is skipped instead, with the
// same reason (shown by go test -v). A CADENCE_TEST_CLAUDE that names a
// missing file always fails.
func FindCLI(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("fakeapi: %v", err)
	}
	p, why, skip := locateCLI(os.Getenv, wd)
	switch {
	case p != "":
		return p
	case skip:
		t.Skip(why)
	default:
		t.Fatal(why)
	}
	return ""
}

// locateCLI is FindCLI's decision: the binary's path, or why there is
// none and whether that skips (true) or fails (false) the test.
func locateCLI(getenv func(string) string, wd string) (path, why string, skip bool) {
	if p := getenv(CLIEnvVar); p != "" {
		if !isExecutable(p) {
			return "", fmt.Sprintf("fakeapi: %s=%s is not an executable file", CLIEnvVar, p), false
		}
		return p, "", false
	}
	root, ok := repoRoot(wd)
	var p string
	if ok {
		p = filepath.Join(root, CLIInstallDir, "node_modules", ".bin", "claude")
		if isExecutable(p) {
			return p, "", false
		}
	}
	msg := "fakeapi: claude CLI not found"
	if ok {
		msg += " at " + p
	} else {
		msg += " (no go.mod above " + wd + ")"
	}
	msg += "; " + installHint
	if getenv(SkipEnvVar) == "skip" {
		return "", "SKIP end-to-end test: " + msg, true
	}
	return "", msg + " (or set " + SkipEnvVar + "=skip to skip the end-to-end tests)", false
}

// repoRoot walks up from dir to the first folder that has go.mod.
func repoRoot(dir string) (string, bool) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// isExecutable reports whether p (after symlinks) is a regular file with
// an execute bit.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// CLIEnv returns a whole, explicit environment for running the CLI against
// srv:
//
//	ANTHROPIC_BASE_URL=<srv.URL()>
//	ANTHROPIC_API_KEY=sk-dummy
//	HOME=<a fresh t.TempDir()>
//	PATH=<this process's PATH>
//	TMPDIR=<this process's TMPDIR, when set>
//	CLAUDE_CODE_MAX_RETRIES=0
//	GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL
//	DISABLE_AUTOUPDATER=1
//	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
//
// IS_SANDBOX is not set, so runs as root cannot use bypassPermissions.
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC also stops the CLI's HEAD
// /api/hello preconnect and its auto-mode classifier requests: with it,
// --permission-mode auto (or plan) refuses every checked action and exits
// 1, so remove it ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC") for auto
// mode tests.
// Each override "KEY=VALUE" replaces or adds a variable; a bare "KEY"
// removes one. Call CLIEnv once and reuse the result for invocations that
// must share HOME (the CLI keeps its sessions there, for --resume).
func CLIEnv(t testing.TB, srv *Server, overrides ...string) []string {
	t.Helper()
	vars := [][2]string{
		{"ANTHROPIC_BASE_URL", srv.URL()},
		{"ANTHROPIC_API_KEY", "sk-dummy"},
		{"HOME", t.TempDir()},
		{"PATH", os.Getenv("PATH")},
		{"CLAUDE_CODE_MAX_RETRIES", "0"},
		{"GIT_AUTHOR_NAME", "cadence test"},
		{"GIT_AUTHOR_EMAIL", "test@cadence.invalid"},
		{"GIT_COMMITTER_NAME", "cadence test"},
		{"GIT_COMMITTER_EMAIL", "test@cadence.invalid"},
		{"DISABLE_AUTOUPDATER", "1"},
		{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
	}
	if tmp, ok := os.LookupEnv("TMPDIR"); ok {
		vars = append(vars, [2]string{"TMPDIR", tmp})
	}
	env := make([]string, 0, len(vars)+len(overrides))
	for _, kv := range vars {
		env = append(env, kv[0]+"="+kv[1])
	}
	return SetEnv(env, overrides...)
}

// SetEnv returns env with each "KEY=VALUE" of kvs replacing or adding a
// variable, and each bare "KEY" removing one. env itself is not changed.
func SetEnv(env []string, kvs ...string) []string {
	out := append([]string(nil), env...)
	for _, kv := range kvs {
		key, _, set := strings.Cut(kv, "=")
		kept := out[:0]
		for _, e := range out {
			if k, _, _ := strings.Cut(e, "="); k != key {
				kept = append(kept, e)
			}
		}
		out = kept
		if set {
			out = append(out, kv)
		}
	}
	return out
}
