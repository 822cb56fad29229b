//go:build unix

package main

// Helpers of the end-to-end tests (e2e_*_test.go): each test runs the
// `cadence` command (put on PATH by TestMain) with `apply` on a real wave
// file, in throwaway git repositories, with the real Claude Code CLI talking
// to the scripted fake Anthropic API of internal/fakeapi.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// e2eRunTimeout bounds one cadence command.
const e2eRunTimeout = 3 * time.Minute

// markerLine is the first line of every brief template of the e2e waves: it
// names the fake API script of the step, such as "a-implement0" or
// "a-fix1".
const markerLine = "[[fake:{{.Lot}}-{{.Step}}{{.Pass}}]]\n"

// e2e is one scenario's world: a folder with the wave file, its templates
// and a repository "app", a fake API, and the environment cadence runs in.
type e2e struct {
	t    *testing.T
	dir  string // the wave's folder
	repo string // the repository app
	wave string // the wave file
	srv  *fakeapi.Server
	url  string // where the CLI sends its requests (the session splitter)
	env  []string
}

// waveOpts shape the wave file.
type waveOpts struct {
	// Budget is the wave's budget ("1M" when empty).
	Budget string
	// Wave holds extra attributes of the wave block; Lot, of lot "a";
	// Repo, of repo "app"; Agent, of agent "claude".
	Wave, Lot, Repo, Agent string
	// More is appended to the file (more lots).
	More string
}

// newE2E makes a scenario: the repository app (branch main, one commit of
// README.md), the templates, the wave file and the fake API with scripts.
// A script named NAME~K (K ≥ 2) answers the K-th session, in order of
// appearance, whose requests carry the marker NAME (see splitSessions).
func newE2E(t *testing.T, scripts map[string]fakeapi.Script, o waveOpts) *e2e {
	t.Helper()
	cli := fakeapi.FindCLI(t)
	e := &e2e{t: t, dir: t.TempDir()}
	e.srv = fakeapi.Start(t, scripts)
	split := httptest.NewServer(splitSessions(e.srv, scripts))
	t.Cleanup(split.Close)
	e.url = split.URL
	e.env = fakeapi.CLIEnv(t, e.srv,
		"ANTHROPIC_BASE_URL="+e.url,
		"CADENCE_CLAUDE_BIN="+cli,
		"CADENCE_HOME="+t.TempDir(),
		"PATH="+os.Getenv("PATH"),
		"NO_COLOR=1",
		noRaceExitSleep)
	e.repo = filepath.Join(e.dir, "app")
	e.git(e.dir, "init", "-q", "-b", "main", e.repo)
	e.writeFile(filepath.Join(e.repo, "README.md"), "# app\n")
	e.git(e.repo, "add", "README.md")
	e.git(e.repo, "commit", "-qm", "init")
	e.writeTemplates()
	if o.Budget == "" {
		o.Budget = "1M"
	}
	e.wave = filepath.Join(e.dir, "wave.hcl")
	e.writeFile(e.wave, fmt.Sprintf(`wave "w" {
  budget    = %q
  templates = "templates"
%s
}

agent "claude" {
  max_retries = 0
%s
}

repo "app" {
  path = "app"
  test = "true"
%s
}

lot "a" {
  repo  = repo.app
  title = "Add f"
  brief = "Add the file f.txt."
%s
}
%s`, o.Budget, o.Wave, o.Agent, o.Repo, o.Lot, o.More))
	return e
}

// writeTemplates copies the built-in brief templates into templates/ with
// the marker line on top.
func (e *e2e) writeTemplates() {
	e.t.Helper()
	files, err := filepath.Glob("../../executor/briefs/*.tmpl")
	if err != nil || len(files) < 6 {
		e.t.Fatalf("brief templates: %v (%d found)", err, len(files))
	}
	dir := filepath.Join(e.dir, "templates")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			e.t.Fatal(err)
		}
		e.writeFile(filepath.Join(dir, filepath.Base(f)), markerLine+string(b))
	}
}

func (e *e2e) writeFile(path, content string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// git runs git in dir with the scenario's environment (no CADENCE_WAVE:
// the lead's own git) and returns its trimmed output.
func (e *e2e) git(dir string, args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, e.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// run is how one cadence command ended.
type run struct {
	out  string // stdout and stderr together
	code int
	took time.Duration
}

// cadence runs `cadence ARGS...` in the wave's folder to its end.
func (e *e2e) cadence(args ...string) run {
	e.t.Helper()
	return e.start(args...).wait()
}

// apply runs `cadence apply -auto-approve -no-color wave.hcl` plus extra
// flags.
func (e *e2e) apply(flags ...string) run {
	e.t.Helper()
	return e.cadence(e.applyArgs(flags...)...)
}

func (e *e2e) applyArgs(flags ...string) []string {
	args := append([]string{"apply", "-auto-approve", "-no-color"}, flags...)
	return append(args, e.wave)
}

// cadenceProc is a cadence process started by start.
type cadenceProc struct {
	e      *e2e
	cmd    *exec.Cmd
	out    *testutil.SyncBuffer
	done   chan struct{}
	err    error
	cancel context.CancelFunc
	start  time.Time
	args   []string
}

// start starts `cadence ARGS...` in its own process group, bounded by
// e2eRunTimeout (then the group is killed).
func (e *e2e) start(args ...string) *cadenceProc {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eRunTimeout)
	cmd := exec.CommandContext(ctx, "cadence", args...)
	cmd.Dir, cmd.Env = e.dir, e.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	p := &cadenceProc{e: e, cmd: cmd, out: &testutil.SyncBuffer{}, done: make(chan struct{}), cancel: cancel, start: time.Now(), args: args}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		cancel()
		e.t.Fatalf("start cadence: %v", err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	e.t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// startUntilTurn starts `cadence apply` and waits until the session whose
// requests carry marker has sent its n-th request (its earlier tool calls
// have then run); it returns the process and the session's id. Should that
// never happen, cadence is killed and the test fails.
func (e *e2e) startUntilTurn(marker string, n int) (*cadenceProc, string) {
	e.t.Helper()
	p := e.start(e.applyArgs()...)
	var session string
	if !testutil.Eventually(2*time.Minute, func() bool {
		q := e.turns(marker)
		if len(q) >= n {
			session = q[0].SessionID
		}
		return len(q) >= n
	}) {
		p.signal(syscall.SIGKILL)
		<-p.done
		e.t.Fatalf("the %s session never sent request %d:\n%s", marker, n, p.out.String())
	}
	return p, session
}

// wait waits for the process and returns how it ended.
func (p *cadenceProc) wait() run {
	p.e.t.Helper()
	<-p.done
	p.cancel()
	r := run{out: p.out.String(), took: time.Since(p.start)}
	var ee *exec.ExitError
	switch {
	case errors.As(p.err, &ee) && ee.ExitCode() >= 0:
		r.code = ee.ExitCode()
	case p.err != nil:
		p.e.t.Fatalf("cadence %s: %v (timeout %v?)\n%s", strings.Join(p.args, " "), p.err, e2eRunTimeout, r.out)
	}
	p.e.t.Logf("cadence %s: exit %d in %v\n%s", strings.Join(p.args, " "), r.code, r.took.Round(time.Millisecond), indentLines(r.out))
	return r
}

// signal sends sig to the cadence process itself.
func (p *cadenceProc) signal(sig syscall.Signal) {
	p.e.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.e.t.Fatalf("signal cadence: %v", err)
	}
}

func indentLines(s string) string {
	return "\t| " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t| ")
}

// state reads the wave's state file.
func (e *e2e) state() *state.State {
	e.t.Helper()
	st, _, err := state.Read(state.PathFor(e.wave))
	if err != nil {
		e.t.Fatalf("read state: %v", err)
	}
	return st
}

// lot returns a lot of the state, failing the test when it is missing.
func (e *e2e) lot(st *state.State, id string) *state.Lot {
	e.t.Helper()
	l := st.Lots[id]
	if l == nil {
		e.t.Fatalf("no lot %s in the state", id)
	}
	return l
}

// wantCode checks an exit code.
func (r run) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d", r.code, code)
	}
}

// wantOut checks that the output matches each regular expression.
func (r run) wantOut(t *testing.T, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(r.out) {
			t.Errorf("output lacks %q", p)
		}
	}
}

// steps describes a lot's steps as "kind[pass]:status" for messages and
// comparisons, e.g. "implement:ok review:ok fix1:ok".
func steps(l *state.Lot) string {
	var parts []string
	for _, s := range l.Steps {
		k := string(s.Kind)
		if s.Pass > 0 {
			k += strconv.Itoa(s.Pass)
		}
		parts = append(parts, k+":"+string(s.Status))
	}
	return strings.Join(parts, " ")
}

// stepsOf returns the lot's steps of one kind.
func stepsOf(l *state.Lot, kind state.StepKind) []state.Step {
	var out []state.Step
	for _, s := range l.Steps {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// writeDone is the report of a finished write step.
func writeDone(summary string) fakeapi.Turn {
	return fakeapi.StructuredOutput(map[string]any{"status": "done", "summary": summary})
}

// review is a review's report.
func review(verdict string, findings ...map[string]any) fakeapi.Turn {
	if findings == nil {
		findings = []map[string]any{}
	}
	return fakeapi.StructuredOutput(map[string]any{"verdict": verdict, "findings": findings})
}

// finding is one review finding.
func finding(severity, file string, line int, text string) map[string]any {
	return map[string]any{"severity": severity, "file": file, "line": line, "text": text}
}

// commit is a Bash turn that writes name and commits it citing lot a.
func commit(name, content string) fakeapi.Turn {
	return fakeapi.Bash(fmt.Sprintf("echo %s > %s && git add %s && git commit -q -m 'a: add %s (a)'", content, name, name, name))
}

// implementScript is the usual implement session: a commit, then the report.
func implementScript() fakeapi.Script {
	return fakeapi.Script{commit("f.txt", "f"), writeDone("added f.txt")}
}

// splitSessions serves the fake API, but gives the K-th session (K ≥ 2,
// by order of first request) of a marker NAME the script NAME~K when
// there is one, by rewriting the marker in its requests. cadence runs a
// step again in a fresh session with the same brief (a question answered,
// a usage limit waited out, an interrupted step replayed): this tells the
// sessions apart.
func splitSessions(srv *fakeapi.Server, scripts map[string]fakeapi.Script) http.Handler {
	marker := regexp.MustCompile(`\[\[fake:([^\]\s"\\]+)\]\]`)
	var mu sync.Mutex
	order := map[string][]string{} // marker → session ids, first seen first
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sid := r.Header.Get("X-Claude-Code-Session-Id")
		if m := marker.FindSubmatch(body); m != nil && sid != "" {
			name := string(m[1])
			mu.Lock()
			k := indexOf(order[name], sid)
			if k < 0 {
				order[name] = append(order[name], sid)
				k = len(order[name]) - 1
			}
			mu.Unlock()
			if alt := fmt.Sprintf("%s~%d", name, k+1); k > 0 && scripts[alt] != nil {
				body = bytes.Replace(body, m[0], []byte("[[fake:"+alt+"]]"), 1)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		srv.ServeHTTP(w, r)
	})
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// marked lists the live processes (pid and command line) whose environment
// holds env ("KEY=VALUE"), such as CADENCE_SESSION=<id>.
func marked(env string) []string {
	mark := []byte(env + "\x00")
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err != nil || !bytes.Contains(append(b, 0), mark) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + d.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i >= 0 && bytes.HasPrefix(bytes.TrimSpace(st[i+1:]), []byte("Z")) {
				continue // a zombie: dead, not yet reaped
			}
		}
		cmdline, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '})))
	}
	return out
}

// noneLeft fails the test when a process of the scenario is still alive:
// one whose environment points at this scenario's fake API (cadence, the
// CLI, their tools), or that carries one of the session marks.
func (e *e2e) noneLeft(sessions ...string) {
	e.t.Helper()
	marks := []string{"ANTHROPIC_BASE_URL=" + e.url}
	for _, s := range sessions {
		marks = append(marks, "CADENCE_SESSION="+s)
	}
	deadline := time.Now().Add(2 * time.Second) // reaping may lag a little
	for {
		var left []string
		for _, m := range marks {
			left = append(left, marked(m)...)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Errorf("processes left running:\n%s", strings.Join(left, "\n"))
			for _, l := range left {
				if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// turns returns the recorded requests of the fake that played a turn (or
// the final "done") of the script marker.
func (e *e2e) turns(marker string) []fakeapi.Request { return e.srv.Turns(marker) }
