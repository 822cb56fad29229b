package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestReleaseScript builds a release archive of the host's target with
// .ci/release (offline, into a temporary folder) and checks that its
// cadence reports the version given, that SHA256SUMS lists the archive, and
// that a version that is no semantic version is refused (exit 2).
func TestReleaseScript(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(args ...string) (string, int) {
		cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join("..", "..", ".ci", "release")}, args...)...)
		cmd.Env = append(os.Environ(), "TARGETS="+runtime.GOOS+"/"+runtime.GOARCH, "ALLOW_DIRTY=1")
		b, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(b), code
	}
	if got, code := run("1.0", out); code != 2 || !strings.Contains(got, "not vMAJOR.MINOR.PATCH") {
		t.Fatalf("version 1.0: exit %d, %s; want 2 and a message", code, got)
	}
	const version = "v9.8.7-test.1"
	if got, code := run(version, out); code != 0 {
		t.Fatalf("release: exit %d\n%s", code, got)
	}
	name := "cadence_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil || !strings.Contains(string(sums), "  "+name+".tar.gz\n") {
		t.Fatalf("SHA256SUMS: %v %q", err, sums)
	}
	x := t.TempDir()
	if b, err := exec.CommandContext(ctx, "tar", "-C", x, "-xzf", filepath.Join(out, name+".tar.gz")).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, b)
	}
	for _, f := range []string{"cadence", "README.md"} {
		if _, err := os.Stat(filepath.Join(x, name, f)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(x, name, "cadence"), "version")
	cmd.Env = append(os.Environ(), "CADENCE_CLAUDE_BIN=cadence-no-such-agent")
	b, _ := cmd.CombinedOutput()
	if !strings.HasPrefix(string(b), "cadence "+version) {
		t.Fatalf("cadence version of the release: %q, want it to start with %q", b, "cadence "+version)
	}
}

// TestReadmeTestCommand checks that the README's first screen gives one
// test command, bash .ci/test, and that CI (.ci/run) runs that same script.
func TestReadmeTestCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(readme), "\n## ")
	if !strings.Contains(first, "```sh\nbash .ci/test\n```") {
		t.Errorf("README's first screen has no test block `bash .ci/test`")
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ci), "\nbash .ci/test\n") {
		t.Errorf(".ci/run does not run bash .ci/test, the README's test command")
	}
	script, err := os.ReadFile(filepath.Join("..", "..", ".ci", "test"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apt-get install", "@anthropic-ai/claude-code@", "go test -race"} {
		if !strings.Contains(string(script), want) {
			t.Errorf(".ci/test lacks %q", want)
		}
	}
}
