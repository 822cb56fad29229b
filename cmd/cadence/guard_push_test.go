//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/step/box"
)

// TestGuardPushMatrix runs `cadence apply` on a command lot that commits
// and then pushes to its repository's remote, one form per wave, and
// classifies each form by what the remote and apply show afterwards:
//
//   - prevented: the remote is unchanged (a guard refused the push; the
//     lot goes on, since its command ignores the push's failure);
//   - detected: the remote changed, and the wave stopped as an incident
//     (exit 1) before integrating anything;
//   - reached-undetected: the remote changed and nobody noticed.
//
// A push to a configured remote must never be reached-undetected, however
// it is spelt. A push to a bare repository on this machine that is not a
// remote is prevented where the step sandbox runs (its file system is
// read-only there); outside it (sandbox = false, or no bubblewrap)
// cadence cannot know of it. One line per form is logged: the matrix of
// the guard table of docs/integration.md for command lots.
func TestGuardPushMatrix(t *testing.T) {
	type form struct {
		name string
		// push is the command; ORIGIN and OTHER stand for the paths of the
		// remote and of a bare repository that is not a remote.
		push string
		// gate runs the push from the repository's test gate instead of
		// the lot's command.
		gate bool
		// toOther: the push goes to OTHER, which is no remote.
		toOther bool
	}
	forms := []form{
		{name: "git push", push: "git push -q origin HEAD:refs/heads/x"},
		{name: "--no-verify", push: "git push -q --no-verify origin HEAD:refs/heads/x"},
		{name: "-c core.hooksPath=/dev/null", push: "git -c core.hooksPath=/dev/null push -q origin HEAD:refs/heads/x"},
		{name: "absolute path", push: "git push -q ORIGIN HEAD:refs/heads/x"},
		{name: "file:// URL", push: "git push -q file://ORIGIN HEAD:refs/heads/x"},
		{name: "git send-pack", push: "git send-pack ORIGIN HEAD:refs/heads/x"},
		{name: "env -u CADENCE_WAVE -u GIT_CONFIG_COUNT", push: "env -u CADENCE_WAVE -u GIT_CONFIG_COUNT git push -q origin HEAD:refs/heads/x"},
		{name: "all of them at once", push: "env -u CADENCE_WAVE -u GIT_CONFIG_COUNT git -c core.hooksPath=/dev/null push -q --no-verify file://ORIGIN HEAD:refs/heads/x"},
		{name: "test gate, -c core.hooksPath=/dev/null", push: "git -c core.hooksPath=/dev/null push -q ORIGIN HEAD:refs/heads/x", gate: true},
		{name: "bare repo that is not a remote", push: "git push -q OTHER HEAD:refs/heads/x", toOther: true},
		// What lifts every git-level guard: an explicit push URL on the
		// command line (git then ignores pushInsteadOf), hooks off.
		{name: "-c remote.origin.pushurl=… --no-verify", push: "git -c core.hooksPath=/dev/null -c remote.origin.pushurl=ORIGIN push -q --no-verify origin HEAD:refs/heads/x"},
		// Out of the lot's worktree (where the include holds) and out of
		// the step's environment: from the lead's checkout.
		{name: "env -u GIT_CONFIG_COUNT, from the lead's checkout", push: `env -u GIT_CONFIG_COUNT git -C "$(git rev-parse --path-format=absolute --git-common-dir)/.." push -q origin HEAD:refs/heads/x`},
		{name: "git send-pack to a bare repo that is not a remote", push: "git send-pack OTHER HEAD:refs/heads/x", toOther: true},
	}
	_, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH"))
	boxed := missing == ""
	var matrix []string
	for _, f := range forms {
		t.Run(strings.NewReplacer(" ", "_", "/", "_").Replace(f.name), func(t *testing.T) {
			dir := t.TempDir()
			origin, other, app := filepath.Join(dir, "origin.git"), filepath.Join(dir, "other.git"), filepath.Join(dir, "app")
			env := []string{
				"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CADENCE_HOME=" + t.TempDir(),
				"GIT_AUTHOR_NAME=cadence test", "GIT_AUTHOR_EMAIL=test@cadence.invalid",
				"GIT_COMMITTER_NAME=cadence test", "GIT_COMMITTER_EMAIL=test@cadence.invalid",
				"GIT_CONFIG_NOSYSTEM=1", "NO_COLOR=1", "CADENCE_CLAUDE_BIN=cadence-no-such-agent", noRaceExitSleep,
			}
			git := func(dir string, args ...string) string {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
				return strings.TrimSpace(string(out))
			}
			git(dir, "init", "-q", "--bare", origin)
			git(dir, "init", "-q", "--bare", other)
			git(dir, "init", "-q", "-b", "main", app)
			git(app, "commit", "-q", "--allow-empty", "-m", "init")
			git(app, "remote", "add", "origin", origin)
			git(app, "push", "-q", "origin", "main")
			base := git(app, "rev-parse", "main")
			push := strings.NewReplacer("ORIGIN", origin, "OTHER", other).Replace(f.push)
			run, test := "git commit -q --allow-empty -m 'a: one' && { "+push+"; true; }", ""
			if f.gate {
				run, test = "git commit -q --allow-empty -m 'a: one'", push+"; true"
			}
			wave := fmt.Sprintf("wave \"w\" {}\nrepo \"app\" {\n  path = \"app\"\n  test = %q\n}\nlot \"a\" {\n  repo = repo.app\n  run  = %q\n}\n", test, run)
			if err := os.WriteFile(filepath.Join(dir, "wave.hcl"), []byte(wave), 0o644); err != nil {
				t.Fatal(err)
			}
			target := origin
			if f.toOther {
				target = other
			}
			before := git(dir, "ls-remote", target)

			cmd := exec.Command("cadence", "apply", "-auto-approve", "-no-color", "wave.hcl")
			cmd.Dir, cmd.Env = dir, env
			outb, err := cmd.CombinedOutput()
			out := string(outb)
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			changed := git(dir, "ls-remote", target) != before
			incident := strings.Contains(out, "INCIDENT: ")
			verdict := "prevented"
			switch {
			case changed && incident && code == 1:
				verdict = "detected"
			case changed:
				verdict = "reached-undetected"
			}
			matrix = append(matrix, fmt.Sprintf("%-52s %s", f.name, verdict))
			t.Logf("%s → %s (exit %d)", push, verdict, code)
			switch {
			case f.toOther && boxed && verdict != "prevented":
				t.Errorf("a push to a bare repository on this machine got out of the step sandbox (exit %d):\n%s", code, out)
			case f.toOther:
				// Outside the step sandbox no guard sees it: logged only.
			case verdict == "reached-undetected":
				t.Errorf("a push to the remote went unnoticed (exit %d):\n%s", code, out)
			case verdict == "detected" && git(app, "rev-parse", "main") != base:
				t.Errorf("the wave integrated after the push:\n%s", out)
			case verdict == "prevented" && code != 0:
				t.Errorf("prevented, but apply exited %d:\n%s", code, out)
			}
		})
	}
	t.Logf("push matrix, command lots (step sandbox %v):\n%s", boxed, strings.Join(matrix, "\n"))
}
