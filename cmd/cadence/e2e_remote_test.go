//go:build unix

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// remoteScripts are the sessions of the remote waves: lot a commits f.txt
// and is reviewed conform.
func remoteScripts() map[string]fakeapi.Script {
	return map[string]fakeapi.Script{"a-implement0": implementScript(), "a-review0": {review("conform")}}
}

// remoteWorld is newE2E with a second repository lib and a command lot b
// in it that commits, plus more (an executor block, or none).
func remoteWorld(t *testing.T, more string) *e2e {
	t.Helper()
	e := newE2E(t, remoteScripts(), waveOpts{More: `
repo "lib" {
  path = "lib"
  test = "test -f lib.txt"
}

lot "b" {
  repo = repo.lib
  run  = "echo lib > lib.txt && git add lib.txt && git commit -qm 'b: add lib.txt (b)'"
}
` + more})
	lib := filepath.Join(e.dir, "lib")
	e.git(e.dir, "init", "-q", "-b", "main", lib)
	e.writeFile(filepath.Join(lib, "README.md"), "# lib\n")
	e.git(lib, "add", "README.md")
	e.git(lib, "commit", "-qm", "init")
	return e
}

// startEngine starts an embedded engine with queue team (cap 2, lease 2s)
// and returns its URL.
func startEngine(t *testing.T) string {
	t.Helper()
	eng := enginetest.Start(t)
	createTeam(t, eng.URL())
	return eng.URL()
}

// createTeam creates queue team (cap 2, lease 2s, 3 lost deliveries) on
// the engine at url.
func createTeam(t *testing.T, url string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := queue.CreateQueue(ctx, js, "team", 2, 2*time.Second, 3); err != nil {
		t.Fatal(err)
	}
}

// startWorker starts `cadence worker` as a process of its own, with its
// own CADENCE_HOME, in its own process group, with more flags; it is
// stopped (SIGTERM, then its group killed) when the test ends.
func (e *e2e) startWorker(url, id string, more ...string) *cadenceProc {
	e.t.Helper()
	env := append([]string(nil), e.env...)
	for i, kv := range env {
		if strings.HasPrefix(kv, "CADENCE_HOME=") {
			env[i] = "CADENCE_HOME=" + e.t.TempDir()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eRunTimeout)
	args := append([]string{"worker", "-engine", url, "-queue", "team", "-slots", "1", "-id", id}, more...)
	cmd := exec.CommandContext(ctx, "cadence", args...)
	cmd.Dir, cmd.Env = e.t.TempDir(), env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	p := &cadenceProc{e: e, cmd: cmd, out: &testutil.SyncBuffer{}, done: make(chan struct{}), cancel: cancel, start: time.Now(), args: args}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		cancel()
		e.t.Fatalf("start worker: %v", err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
		}
		cancel()
		<-p.done
		e.t.Logf("worker %s:\n%s", id, indentLines(p.out.String()))
	})
	if !testutil.Eventually(time.Minute, func() bool { return strings.Contains(p.out.String(), "serving queue team") }) {
		e.t.Fatalf("worker %s did not start:\n%s", id, p.out.String())
	}
	return p
}

// outcome is what a wave left that does not depend on when it ran: each
// repository's main as commit subjects and trees, and each lot's status
// and step kinds.
func (e *e2e) outcome() string {
	var b strings.Builder
	for _, r := range []string{"app", "lib"} {
		dir := filepath.Join(e.dir, r)
		b.WriteString(r + ":\n" + e.git(dir, "log", "--format=%s %T", "main") + "\n")
	}
	st := e.state()
	for _, id := range []string{"a", "b"} {
		l := e.lot(st, id)
		b.WriteString(id + ": " + string(l.Status) + " " + steps(l) + "\n")
	}
	return b.String()
}

// TestE2ERemoteLikeLocal: a wave of an agent lot and a command lot over two
// repositories, with executor "nats", runs its sessions and test gates on
// two `cadence worker` processes through an embedded engine and
// integrates exactly as the same wave run locally: the same commit
// subjects and trees on each main, the same lot outcomes and steps.
func TestE2ERemoteLikeLocal(t *testing.T) {
	needSandbox(t)
	url := startEngine(t)
	local := remoteWorld(t, "")
	local.apply().wantCode(t, 0)

	e := remoteWorld(t, "\nexecutor \"nats\" {\n  url   = \""+url+"\"\n  queue = \"team\"\n  lease = \"2s\"\n}\n")
	e.startWorker(url, "w1")
	e.startWorker(url, "w2")
	r := e.apply()
	r.wantCode(t, 0)
	if got, want := e.outcome(), local.outcome(); got != want {
		t.Errorf("remote run:\n%s\nlocal run:\n%s", got, want)
	}
	st := e.state()
	remote := 0
	for _, s := range e.lot(st, "a").Steps {
		if s.Remote != nil {
			remote++
			if s.Remote.Worker != "w1" && s.Remote.Worker != "w2" {
				t.Errorf("step %s on worker %q", s.Kind, s.Remote.Worker)
			}
		}
	}
	if remote == 0 {
		t.Errorf("no step of lot a ran remotely: %s", steps(e.lot(st, "a")))
	}
	if l := e.lot(st, "a"); l.Status != state.LotDone {
		t.Errorf("lot a %s: %s", l.Status, l.Cause)
	}

}

// remoteExecutor is the executor block of a wave on the engine at url.
func remoteExecutor(url string) string {
	return "\nexecutor \"nats\" {\n  url   = \"" + url + "\"\n  queue = \"team\"\n  lease = \"2s\"\n}\n"
}

// goneWithin waits up to d for no live process to carry the session's
// mark; it says what is left otherwise.
func goneWithin(d time.Duration, session string) []string {
	var left []string
	testutil.Eventually(d, func() bool {
		left = marked("CADENCE_SESSION=" + session)
		return len(left) == 0
	})
	return left
}

// TestE2ERemoteSIGINT: SIGINT of the apply while lot a's session runs on
// a worker cancels the run there: the worker ends the session's process
// tree within a bounded wait, apply exits interrupted, and the lot is
// interrupted (the next apply resumes it).
func TestE2ERemoteSIGINT(t *testing.T) {
	needSandbox(t)
	url := startEngine(t)
	scripts := remoteScripts()
	scripts["a-implement0"] = fakeapi.Script{fakeapi.Bash("sleep 120"), writeDone("slept")}
	e := newE2E(t, scripts, waveOpts{More: remoteExecutor(url)})
	e.startWorker(url, "w1")
	p, session := e.startUntilTurn("a-implement0", 1)
	if !testutil.Eventually(30*time.Second, func() bool { return len(marked("CADENCE_SESSION="+session)) > 0 }) {
		t.Fatal("the session never ran on the worker")
	}
	p.signal(syscall.SIGINT)
	r := p.wait()
	if r.code != 130 && r.code != 4 && r.code != 1 {
		t.Errorf("apply exited %d after SIGINT", r.code)
	}
	if r.took > 90*time.Second {
		t.Errorf("apply took %s to stop after SIGINT", r.took)
	}
	if left := goneWithin(30*time.Second, session); len(left) > 0 {
		t.Errorf("the remote session's processes are left:\n%s", strings.Join(left, "\n"))
	}
	if l := e.lot(e.state(), "a"); l.Status == state.LotDone {
		t.Errorf("lot a done after SIGINT")
	}
}

// engineEventually waits up to d for found to say yes about the engine
// at url (a JetStream context, each look bounded by 5 s).
func engineEventually(t *testing.T, url string, d time.Duration, found func(ctx context.Context, js jetstream.JetStream) bool) bool {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	return testutil.Eventually(d, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return found(ctx, js)
	})
}

// checkpointed waits up to d for a checkpoint bundle in the queue's bundle
// store of the engine at url.
func checkpointed(t *testing.T, url string, d time.Duration) bool {
	t.Helper()
	return engineEventually(t, url, d, func(ctx context.Context, js jetstream.JetStream) bool {
		store, err := js.ObjectStore(ctx, "CADENCE_team_bundles")
		if err != nil {
			return false
		}
		infos, _ := store.List(ctx)
		for _, i := range infos {
			if strings.Contains(i.Name, ".checkpoint.d") { // RUN_KEY.result.REPO.checkpoint.dN
				return true
			}
		}
		return false
	})
}

// TestE2ERemoteWorkerKilled: kill -9 of the worker whose session has
// committed once (a checkpoint uploaded) and then waits: the dead
// worker's session tree is gone, the step is delivered again to the other
// worker, which resumes from the checkpoint and commits the rest; the
// lot's main holds each commit once, none lost.
func TestE2ERemoteWorkerKilled(t *testing.T) {
	needSandbox(t)
	url := startEngine(t)
	scripts := remoteScripts()
	scripts["a-implement0"] = fakeapi.Script{commit("f.txt", "f"), fakeapi.Bash("sleep 120"), writeDone("never")}
	scripts["a-implement0~2"] = fakeapi.Script{commit("g.txt", "g"), writeDone("added g.txt")}
	e := newE2E(t, scripts, waveOpts{More: remoteExecutor(url)})
	w1 := e.startWorker(url, "w1")
	p, session := e.startUntilTurn("a-implement0", 2)
	if !checkpointed(t, url, time.Minute) {
		t.Fatal("no checkpoint of the first commit")
	}
	e.startWorker(url, "w2")
	if err := w1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if left := goneWithin(30*time.Second, session); len(left) > 0 {
		t.Errorf("the killed worker's session is left:\n%s", strings.Join(left, "\n"))
	}
	r := p.wait()
	r.wantCode(t, 0)
	if got, want := e.git(e.repo, "log", "--format=%s", "main"), "a: add g.txt (a)\na: add f.txt (a)\ninit"; got != want {
		t.Errorf("main:\n%s\nwant:\n%s", got, want)
	}
	st := e.state()
	var workers []string
	for _, s := range e.lot(st, "a").Steps {
		if s.Kind == state.StepImplement && s.Remote != nil {
			workers = append(workers, s.Remote.Worker)
		}
	}
	if len(workers) == 0 || workers[len(workers)-1] != "w2" {
		t.Errorf("implement ran on %v, want w2 last", workers)
	}
}
