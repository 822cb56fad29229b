package step_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/executor/step/box"
	"github.com/cadence-run/cadence/executor/step/steptest"
	"github.com/cadence-run/cadence/gitint"
	"github.com/cadence-run/cadence/gitint/gittest"
	"github.com/cadence-run/cadence/internal/layout"
	"github.com/cadence-run/cadence/internal/proc"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/spec"
)

// boxWave is a wave of two repositories, app and other, with lots a and b
// of app, each in its worktree, their guards installed, a CADENCE_HOME
// with two slot files, and a state journal and request folder: what a
// hostile command lot a could reach. Everything is in one test folder,
// which the step's environment names (ROOT) so that the box shows it
// read-only, as it shows a machine's folders outside /tmp.
type boxWave struct {
	root, app, other, home, cadenceHome string
	wave                                layout.Wave
	wt                                  map[string]string
	starts                              map[string]string
	otherPrev                           string
	local                               *step.Local
	cfg                                 *spec.Config
	sup                                 *step.Supervisor
}

// opts are the options of the wave's step runner, with env after the
// test's own environment entries.
func (w *boxWave) opts(env ...string) step.LocalOptions {
	return step.LocalOptions{Config: w.cfg, Git: gitint.NewRepos(gittest.Env()), Agent: steptest.BriefAgent{},
		Env: append(append(gittest.Env(), "HOME="+w.home, "XDG_CACHE_HOME=", "ROOT="+w.root), env...), Supervisor: w.sup, Home: w.cadenceHome}
}

func newBoxWave(t testing.TB) *boxWave {
	t.Helper()
	if _, missing := new(box.Prober).Probe(context.Background(), os.Getenv("PATH")); missing != "" {
		t.Skipf("no step sandbox here: %s", missing)
	}
	root := t.TempDir()
	w := &boxWave{root: root, app: filepath.Join(root, "app"), other: filepath.Join(root, "other"),
		home: filepath.Join(root, "home"), wt: map[string]string{}, starts: map[string]string{}}
	for _, r := range []string{w.app, w.other} {
		gittest.Git(t, root, "init", "-q", "-b", "main", r)
		write(t, filepath.Join(r, "f"), "lead's\n")
		gittest.Git(t, r, "add", "f")
		gittest.Git(t, r, "commit", "-q", "-m", "base")
		gittest.Git(t, r, "commit", "-q", "--allow-empty", "-m", "second")
		uninstall, err := gitint.NewGit(gittest.Env()).InstallGuard(context.Background(), r)
		if err != nil {
			t.Fatalf("install the guard: %v", err)
		}
		t.Cleanup(func() { _ = uninstall() })
	}
	w.otherPrev = gittest.Git(t, w.other, "rev-parse", "main~1")
	w.cadenceHome = filepath.Join(w.home, ".cadence")
	for _, s := range []string{"slot-0", "slot-1"} {
		write(t, filepath.Join(w.cadenceHome, "slots", s), "")
	}
	file := filepath.Join(root, "wave", "wave.hcl")
	write(t, file, fmt.Sprintf("wave \"w\" {\n  worktrees = %q\n}\nrepo \"app\" {\n  path = %q\n}\nrepo \"other\" {\n  path = %q\n}\nlot \"a\" {\n  run = \"true\"\n}\nlot \"b\" {\n  run = \"true\"\n}\n", filepath.Join(root, "worktrees"), w.app, w.other))
	w.wave = layout.New(file, "w", w.cadenceHome)
	write(t, w.wave.Journal(), "{\"lot\":\"a\"}\n")
	if err := os.MkdirAll(w.wave.Requests(), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg, diags := spec.NewLoader().LoadFile(file, spec.Options{})
	if diags.HasErrors() {
		t.Fatalf("wave file: %v", diags)
	}
	w.cfg, w.sup = cfg, supervisor(t)
	w.local = step.NewLocal(w.opts())
	for _, lot := range []string{"a", "b"} {
		w.wt[lot] = filepath.Join(root, "worktrees", lot)
		w.starts[lot] = gittest.Git(t, w.app, "rev-parse", "main")
		p, err := w.local.Prepare(context.Background(), step.PrepareRequest{Lot: w.lot(lot), Fresh: true})
		if err != nil || p.Err != "" {
			t.Fatalf("Prepare lot %s: %v %s", lot, err, p.Err)
		}
	}
	return w
}

// lot is lot id of app, in its worktree.
func (w *boxWave) lot(id string) step.Lot {
	return step.Lot{Wave: "w", WaveID: steptest.WaveIDFor(w.root), ID: id, Branch: "cadence/w/" + id,
		Repos: []step.Repo{{Name: "app", Worktree: w.wt[id], Start: w.starts[id]}}}
}

// run runs command as lot a's run step, in the box unless noSandbox.
func (w *boxWave) run(t *testing.T, command string, noSandbox bool) step.Result {
	t.Helper()
	return w.runCtx(context.Background(), t, command, noSandbox)
}

func (w *boxWave) runCtx(ctx context.Context, t *testing.T, command string, noSandbox bool, writable ...string) step.Result {
	t.Helper()
	req := step.Request{Lot: w.lot("a"), Kind: state.StepRun, Dir: w.wt["a"], Command: command, Timeout: time.Minute,
		Log: filepath.Join(w.root, "logs", "run.log"), OutsideSandbox: true, NoSandbox: noSandbox, Writable: writable}
	res, err := w.local.RunStep(ctx, req, &steptest.Recorder{})
	if err != nil {
		t.Fatalf("RunStep: %v", err)
	}
	return res
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}

// refused are the file system's words for a write the box refuses (and
// git's, for a push whose receiving side cannot write its objects).
var refused = []string{"Read-only file system", "Device or resource busy", "Operation not permitted", "Permission denied",
	"unable to create temporary object directory"}

// TestSandboxRefusesAttacks: each attack of a hostile command lot on what
// is not its own works outside the sandbox (sandbox = false), or is only
// detected there after the step (an incident), and is refused by the file
// system in it.
func TestSandboxRefusesAttacks(t *testing.T) {
	for _, c := range []struct {
		name    string
		command func(w *boxWave) string
		prepare func(t *testing.T, w *boxWave)
		// harmed says what the attack changed ("" nothing).
		harmed func(t *testing.T, w *boxWave) string
	}{
		{"AnotherRepositorysBase",
			func(w *boxWave) string {
				return fmt.Sprintf("git -C %s -c core.hooksPath=/dev/null update-ref refs/heads/main %s", w.other, w.otherPrev)
			}, nil,
			func(t *testing.T, w *boxWave) string {
				if h := gittest.Git(t, w.other, "rev-parse", "main"); h == w.otherPrev {
					return "other's main rewound to " + h
				}
				return ""
			}},
		{"LeadsCheckoutReset",
			func(w *boxWave) string {
				return fmt.Sprintf("git -C %s -c core.hooksPath=/dev/null reset -q --hard", w.app)
			},
			func(t *testing.T, w *boxWave) { write(t, filepath.Join(w.app, "f"), "lead's edit\n") },
			func(t *testing.T, w *boxWave) string {
				if got := read(t, filepath.Join(w.app, "f")); got != "lead's edit\n" {
					return "the lead's edit is gone: " + got
				}
				return ""
			}},
		{"HookPlanted",
			func(w *boxWave) string {
				return fmt.Sprintf("printf '#!/bin/sh\\nexit 0\\n' > %s/.git/hooks/pre-commit", w.app)
			}, nil,
			func(t *testing.T, w *boxWave) string {
				if _, err := os.Stat(filepath.Join(w.app, ".git", "hooks", "pre-commit")); err == nil {
					return "a pre-commit hook was planted"
				}
				return ""
			}},
		{"JournalForged",
			func(w *boxWave) string {
				return fmt.Sprintf(`echo '{"lot":"b","status":"done"}' >> %s`, w.wave.Journal())
			}, nil,
			func(t *testing.T, w *boxWave) string {
				if got := read(t, w.wave.Journal()); got != "{\"lot\":\"a\"}\n" {
					return "the journal reads " + got
				}
				return ""
			}},
		{"RequestForged",
			func(w *boxWave) string { return fmt.Sprintf(`echo stop > %s/forged`, w.wave.Requests()) }, nil,
			func(t *testing.T, w *boxWave) string {
				if _, err := os.Stat(filepath.Join(w.wave.Requests(), "forged")); err == nil {
					return "a request file was written"
				}
				return ""
			}},
		{"SlotsDeleted",
			func(w *boxWave) string { return fmt.Sprintf("rm -f %s/slots/slot-*", w.cadenceHome) }, nil,
			func(t *testing.T, w *boxWave) string {
				if _, err := os.Stat(filepath.Join(w.cadenceHome, "slots", "slot-0")); err != nil {
					return "slot-0 is gone"
				}
				return ""
			}},
		{"BackupRefDeleted",
			func(w *boxWave) string {
				return "git -c core.hooksPath=/dev/null update-ref -d refs/cadence/backup/old/x/1"
			},
			func(t *testing.T, w *boxWave) {
				gittest.Git(t, w.app, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/cadence/backup/old/x/1", "main")
			},
			func(t *testing.T, w *boxWave) string {
				if _, err := gittest.Try(w.app, "rev-parse", "-q", "--verify", "refs/cadence/backup/old/x/1"); err != nil {
					return "the backup ref is gone"
				}
				return ""
			}},
		{"StashCleared",
			func(w *boxWave) string { return "git -c core.hooksPath=/dev/null stash clear" },
			func(t *testing.T, w *boxWave) {
				write(t, filepath.Join(w.app, "f"), "lead's work\n")
				gittest.Git(t, w.app, "-c", "core.hooksPath=/dev/null", "stash", "-q")
			},
			func(t *testing.T, w *boxWave) string {
				if _, err := gittest.Try(w.app, "rev-parse", "-q", "--verify", "refs/stash"); err != nil {
					return "the lead's stash is gone"
				}
				return ""
			}},
		{"SendPackToABareRepository",
			func(w *boxWave) string {
				return fmt.Sprintf("git send-pack %s HEAD:refs/heads/evil", filepath.Join(w.root, "origin.git"))
			},
			func(t *testing.T, w *boxWave) {
				gittest.Git(t, w.root, "init", "-q", "--bare", "origin.git")
			},
			func(t *testing.T, w *boxWave) string {
				if _, err := gittest.Try(filepath.Join(w.root, "origin.git"), "rev-parse", "-q", "--verify", "refs/heads/evil"); err == nil {
					return "refs/heads/evil was pushed"
				}
				return ""
			}},
		{"CommitIntoAnotherLot",
			func(w *boxWave) string {
				return fmt.Sprintf("cd %s && echo forged > forged && git add forged && git -c core.hooksPath=/dev/null commit -q -m 'b: forged'", w.wt["b"])
			}, nil,
			func(t *testing.T, w *boxWave) string {
				// Outside the box the guard puts b's branch back, but the
				// file stays in b's worktree, staged: b's next commit
				// takes it as b's work.
				if h := gittest.Git(t, w.app, "rev-parse", "cadence/w/b"); h != w.starts["b"] {
					return "lot b's branch moved to " + h
				}
				if _, err := os.Stat(filepath.Join(w.wt["b"], "forged")); err == nil {
					return "a file was written into lot b's worktree"
				}
				return ""
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, off := range []bool{true, false} {
				w := newBoxWave(t)
				if c.prepare != nil {
					c.prepare(t, w)
				}
				res := w.run(t, c.command(w), off)
				harm := c.harmed(t, w)
				if off {
					// Outside the box the attack works, or is only
					// detected after the step (the guards put a ref or
					// a hook back, as an incident).
					if harm == "" && len(res.Incidents) == 0 && res.Incident == "" {
						t.Errorf("sandbox off: the attack did nothing (status %s: %s); the test proves nothing", res.Status, res.Cause)
					}
					continue
				}
				if harm != "" {
					t.Errorf("sandbox on: %s (status %s: %s)", harm, res.Status, res.Cause)
				}
				if res.Status != state.StepFailed || !containsAny(res.Output, refused) {
					t.Errorf("sandbox on: status %s, output %q; want failed, refused by the file system", res.Status, res.Output)
				}
				if res.Held != "" || len(res.Incidents) > 0 {
					t.Errorf("sandbox on: held %q, incidents %q; want none: nothing changed", res.Held, res.Incidents)
				}
			}
		})
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// TestSandboxLetsTheLotWork: in the box a command lot commits on its own
// branch (the guard's hooks running), writes its worktree, the build
// tools' cache (the sandbox's own, in HOME's cache) and a /tmp of its own,
// and reaches 127.0.0.1.
func TestSandboxLetsTheLotWork(t *testing.T) {
	w := newBoxWave(t)
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		hits++
		fmt.Fprintln(rw, "pong")
	}))
	defer srv.Close()
	tmpName := "cadence-box-" + filepath.Base(w.root)
	t.Cleanup(func() { _ = os.Remove(filepath.Join("/tmp", tmpName)) })
	script := strings.Join([]string{
		"set -e",
		"echo tmp > /tmp/" + tmpName,
		"test \"$TMPDIR\" = /tmp",
		"mkdir -p \"$GOCACHE\" \"$npm_config_cache\" && echo built > \"$GOCACHE/entry\" && echo pkg > \"$npm_config_cache/entry\"",
		"mkdir -p out && echo ok > out/result && cat /tmp/" + tmpName + " > out/tmp",
		fmt.Sprintf("curl -fsS %s > out/net", srv.URL),
		"echo hi > g && git add g && git commit -q -m 'a: add g'",
	}, "\n")
	res := w.run(t, script, false)
	if res.Status != state.StepOK {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Cause, res.Output)
	}
	if len(res.Commits) != 1 || !strings.Contains(res.Commits[0], "a: add g") {
		t.Errorf("commits %q, want a: add g", res.Commits)
	}
	if h := gittest.Git(t, w.app, "rev-parse", "cadence/w/a"); h == w.starts["a"] {
		t.Errorf("lot a's branch did not move")
	}
	if got := read(t, filepath.Join(w.wt["a"], "out", "tmp")); got != "tmp\n" {
		t.Errorf("/tmp in the box read %q", got)
	}
	if _, err := os.Stat(filepath.Join("/tmp", tmpName)); err == nil {
		t.Errorf("the box's /tmp file is on the machine's /tmp")
	}
	if got := read(t, filepath.Join(w.home, ".cache", "cadence", "sandbox", "go-build", "entry")); got != "built\n" {
		t.Errorf("the sandbox's build cache holds %q", got)
	}
	if hits != 1 || read(t, filepath.Join(w.wt["a"], "out", "net")) != "pong\n" {
		t.Errorf("127.0.0.1: %d requests", hits)
	}
	if res.Held != "" || len(res.Incidents) > 0 || res.Incident != "" {
		t.Errorf("held %q, incidents %q %q; want none", res.Held, res.Incidents, res.Incident)
	}
}

// TestSandboxUnderTheSupervisor: the box runs under the step supervisor:
// a daemon the boxed command leaves (setsid, in the background) and a
// command cut short by cadence leave no process carrying the step's
// marks.
func TestSandboxUnderTheSupervisor(t *testing.T) {
	w := newBoxWave(t)
	marks := []string{agent.WaveMark + "=boxtest", agent.LotMark + "=a"}
	res := w.run(t, "setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo $! > daemon", false)
	if res.Status != state.StepOK {
		t.Fatalf("status %s: %s", res.Status, res.Cause)
	}
	if left := proc.Marked(marks); len(left) > 0 {
		t.Errorf("the daemon outlived the step: %v", left)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(w.wt["a"], "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	res = w.runCtx(ctx, t, "touch started; sleep 300 & sleep 300", false)
	cancel()
	if res.Status != state.StepInterrupted {
		t.Errorf("cut short: status %s: %s", res.Status, res.Cause)
	}
	if left := proc.Marked(marks); len(left) > 0 {
		t.Errorf("processes outlived the cut-short step: %v", left)
	}
}

// TestSandboxLotWithoutRepository: a lot without a repository runs in
// the wave's folder, which it may write, but for the wave file and the
// files named after it (state, journal, requests) and the repositories
// there, read-only in its box.
func TestSandboxLotWithoutRepository(t *testing.T) {
	w := newBoxWave(t)
	dir := filepath.Dir(w.wave.File())
	run := func(command string) step.Result {
		req := step.Request{Lot: step.Lot{Wave: "w", WaveID: steptest.WaveIDFor(w.root), ID: "n"}, Kind: state.StepRun, Dir: dir, Command: command,
			Timeout: time.Minute, Log: filepath.Join(w.root, "logs", "n.log"), OutsideSandbox: true}
		res, err := w.local.RunStep(context.Background(), req, &steptest.Recorder{})
		if err != nil {
			t.Fatalf("RunStep: %v", err)
		}
		return res
	}
	if res := run("echo ran >> ran.log && echo again >> ran.log"); res.Status != state.StepOK || read(t, filepath.Join(dir, "ran.log")) != "ran\nagain\n" {
		t.Fatalf("writing its own file: %s %s %s", res.Status, res.Cause, res.Output)
	}
	res := run(fmt.Sprintf("echo forged >> %s", filepath.Base(w.wave.Journal())))
	if res.Status != state.StepFailed || !containsAny(res.Output, refused) || read(t, w.wave.Journal()) != "{\"lot\":\"a\"}\n" {
		t.Errorf("the journal: %s %q, journal %q; want refused, unchanged", res.Status, res.Output, read(t, w.wave.Journal()))
	}
}

// TestSandboxOtherLotsBranches: in lot a's box, the branch of lot b is
// read-only while b is busy (a step of b, or cadence's own work on it);
// while b is idle its ref file is writable (one bind per busy lot, not
// one per lot of the wave: box.Spec.BusyOnly), and a step that rewrites
// it is caught after the step: an incident, b's branch put back, the
// forged value under a's rescue ref.
func TestSandboxOtherLotsBranches(t *testing.T) {
	attack := func(w *boxWave) string {
		gd := strings.TrimSpace(gittest.Git(t, w.app, "rev-parse", "--path-format=absolute", "--git-common-dir"))
		return fmt.Sprintf("c=$(git commit-tree -p main -m forged 'main^{tree}') && echo $c > %s/refs/heads/cadence/w/b", gd)
	}
	t.Run("busy", func(t *testing.T) {
		w := newBoxWave(t)
		done := w.local.Guard().Busy("b")
		res := w.run(t, attack(w), false)
		done()
		if h := gittest.Git(t, w.app, "rev-parse", "cadence/w/b"); h != w.starts["b"] {
			t.Errorf("lot b's branch moved to %s", h)
		}
		if res.Status != state.StepFailed || !containsAny(res.Output, refused) {
			t.Errorf("status %s, output %q; want failed, refused by the file system", res.Status, res.Output)
		}
	})
	t.Run("idle", func(t *testing.T) {
		w := newBoxWave(t)
		res := w.run(t, attack(w), false)
		if h := gittest.Git(t, w.app, "rev-parse", "cadence/w/b"); h != w.starts["b"] {
			t.Errorf("lot b's branch was left at %s", h)
		}
		if res.Incident == "" || !strings.Contains(strings.Join(res.Incidents, "\n"), "the branch of lot b, which had no step running") {
			t.Errorf("incident %q, incidents %q; want lot b's branch put back", res.Incident, res.Incidents)
		}
		// The rescue ref is named after the lot whose step moved it.
		if h, err := gittest.Try(w.app, "log", "-1", "--format=%s", "refs/cadence/rescue/w/a/1"); err != nil || strings.TrimSpace(h) != "forged" {
			t.Errorf("the rescue ref holds %q (%v); want the forged commit", h, err)
		}
	})
}
