//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/ptytest"
)

// TestE2ENoTerminal: cadence run under a terminal, by a lead whose
// environment names a credential helper program (GIT_ASKPASS,
// SSH_ASKPASS, as an editor's terminal does). A step cannot open the
// terminal, and a `git ls-remote` against a server that asks for
// credentials fails at once, saying terminal prompts are disabled,
// without running the lead's helper.
func TestE2ENoTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// What the steps write goes to out, which their step sandbox may
	// write (sandbox_writable): the askpass helper's mark too, should it
	// run from a step.
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	asked := filepath.Join(out, "askpass-ran")
	askpass := filepath.Join(dir, "askpass.sh")
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\necho \"$1\" >> "+asked+"\necho secret\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="cadence test"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CADENCE_HOME=" + t.TempDir(),
		"CADENCE_CLAUDE_BIN=cadence-no-such-agent", "NO_COLOR=1", noRaceExitSleep,
		"GIT_AUTHOR_NAME=cadence test", "GIT_AUTHOR_EMAIL=test@cadence.invalid",
		"GIT_COMMITTER_NAME=cadence test", "GIT_COMMITTER_EMAIL=test@cadence.invalid",
		"GIT_ASKPASS=" + askpass, "SSH_ASKPASS=" + askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=:0"}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main", "app")
	git("-C", "app", "commit", "-q", "--allow-empty", "-m", "init")
	ttyOut, credOut := filepath.Join(out, "tty.out"), filepath.Join(out, "cred.out")
	wave := fmt.Sprintf(`wave "w" {}
repo "app" {
  path             = "app"
  test             = "true"
  sandbox_writable = ["out"]
}
lot "tty" {
  repo = repo.app
  run  = "if (exec 3</dev/tty) 2>/dev/null; then echo terminal > %[1]s; else echo none > %[1]s; fi"
}
lot "cred" {
  repo = repo.app
  run  = "start=$(date +%%s); timeout 60 git ls-remote %[3]s/app.git > %[2]s 2>&1; echo \"exit $? after $(( $(date +%%s) - start ))s\" >> %[2]s"
}
`, ttyOut, credOut, srv.URL)
	if err := os.WriteFile(filepath.Join(dir, "wave.hcl"), []byte(wave), 0o644); err != nil {
		t.Fatal(err)
	}

	ptmx, pts := ptytest.Open(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "cadence", "apply", "-auto-approve", "wave.hcl")
	cmd.Dir, cmd.Env = dir, append(env, "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	var screen strings.Builder
	read := make(chan struct{})
	go func() { // the terminal's output, until cadence is gone (EIO)
		_, _ = io.Copy(&screen, ptmx)
		close(read)
	}()
	err := cmd.Wait()
	select {
	case <-read:
	case <-time.After(5 * time.Second):
	}
	t.Logf("cadence apply under a terminal: %v\n%s", err, indentLines(screen.String()))
	if err != nil {
		t.Errorf("cadence apply: %v", err)
	}
	if b, _ := os.ReadFile(ttyOut); strings.TrimSpace(string(b)) != "none" {
		t.Errorf("a command lot could open the lead's terminal (tty.out %q)", b)
	}
	b, _ := os.ReadFile(credOut)
	t.Logf("git ls-remote:\n%s", b)
	if !strings.Contains(string(b), "terminal prompts disabled") || !strings.Contains(string(b), "exit 128 after") {
		t.Errorf("git ls-remote did not fail on the credential prompt:\n%s", b)
	}
	if strings.Contains(string(b), "exit 124") {
		t.Error("git ls-remote waited for an answer until timeout killed it")
	}
	if b, err := os.ReadFile(asked); err == nil {
		t.Errorf("the lead's credential helper was run: %s", b)
	}
	if strings.Contains(screen.String(), "Username for") || strings.Contains(screen.String(), "Password for") {
		t.Error("a credential prompt reached the lead's terminal")
	}
}
