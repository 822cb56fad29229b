//go:build unix

package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
	"github.com/nats-io/nats.go/jetstream"
)

// sessionsOf counts the sessions the fake API saw of marker: distinct
// session ids of its turns, and of the turns of marker~2, marker~3 (the
// later sessions splitSessions tells apart).
func (e *e2e) sessionsOf(marker string) int {
	ids := map[string]bool{}
	for _, m := range []string{marker, marker + "~2", marker + "~3"} {
		for _, r := range e.turns(m) {
			ids[m+"/"+r.SessionID] = true
		}
	}
	return len(ids)
}

// resultWritten waits up to d for a result in the queue's results bucket
// of a run key holding part.
func resultWritten(t *testing.T, url, part string, d time.Duration) bool {
	t.Helper()
	return engineEventually(t, url, d, func(ctx context.Context, js jetstream.JetStream) bool {
		kv, err := js.KeyValue(ctx, "CADENCE_team_results")
		if err != nil {
			return false
		}
		keys, _ := kv.Keys(ctx)
		for _, k := range keys {
			if strings.Contains(k, part) {
				return true
			}
		}
		return false
	})
}

// commitAs is a session's turn that commits name as lot id.
func commitAs(id, name string) fakeapi.Turn {
	return fakeapi.Bash("echo " + id + " > " + name + " && git add " + name + " && git commit -q -m '" + id + ": add " + name + " (" + id + ")'")
}

// TestE2ERemoteLeadKilled: kill -9 of apply while the implement sessions
// of lots a and b run on two workers. The workers' steps go on; b's ends
// while no lead runs (its result waits in the engine). The next apply
// re-attaches: it awaits a's live run and takes b's written result,
// replaying neither: each implement ran in one session, each commit is on
// main once, both lots are done.
func TestE2ERemoteLeadKilled(t *testing.T) {
	needSandbox(t)
	url := startEngine(t)
	scripts := remoteScripts()
	scripts["a-implement0"] = fakeapi.Script{commit("f.txt", "f"), fakeapi.Bash("sleep 15"), writeDone("added f.txt")}
	scripts["b-implement0"] = fakeapi.Script{commitAs("b", "g.txt"), fakeapi.Bash("sleep 3"), writeDone("added g.txt")}
	scripts["b-review0"] = fakeapi.Script{review("conform")}
	e := newE2E(t, scripts, waveOpts{Repo: "  parallel = 2", More: remoteExecutor(url) + `
lot "b" {
  repo  = repo.app
  title = "Add g"
  brief = "Add the file g.txt."
}
`})
	e.startWorker(url, "w1")
	e.startWorker(url, "w2")
	p, session := e.startUntilTurn("a-implement0", 2)
	if !testutil.Eventually(time.Minute, func() bool { return len(e.turns("b-implement0")) >= 2 }) {
		t.Fatal("lot b's session never reached its second turn")
	}
	p.signal(syscall.SIGKILL)
	<-p.done
	if len(marked("CADENCE_SESSION="+session)) == 0 {
		t.Fatal("lot a's remote session ended with the lead")
	}
	if !resultWritten(t, url, ".b.implement.", time.Minute) {
		t.Fatal("lot b's result was never written")
	}
	r := e.apply()
	r.wantCode(t, 0)
	for _, m := range []string{"a-implement0", "b-implement0"} {
		if n := e.sessionsOf(m); n != 1 {
			t.Errorf("%s ran in %d sessions, want 1", m, n)
		}
	}
	main := e.git(e.repo, "log", "--format=%s", "main")
	for _, s := range []string{"a: add f.txt (a)", "b: add g.txt (b)"} {
		if strings.Count(main, s) != 1 {
			t.Errorf("main holds %q %d times:\n%s", s, strings.Count(main, s), main)
		}
	}
	st := e.state()
	for _, id := range []string{"a", "b"} {
		if l := e.lot(st, id); l.Status != state.LotDone {
			t.Errorf("lot %s %s (%s): %s", id, l.Status, steps(l), l.Cause)
		} else {
			t.Logf("lot %s: %s", id, steps(l))
		}
	}
}

// TestE2ERemoteLeadKilledAfterAccept: the lead dies (a failpoint) right
// after it accepted lot a's implement result into the lot's branch and
// before it recorded the step's end. The next apply re-attaches to the
// run the state names (its head has moved, its run key has not): it takes
// the same result again, unchanged, and runs no second session; main holds
// the commit once.
func TestE2ERemoteLeadKilledAfterAccept(t *testing.T) {
	needSandbox(t)
	url := startEngine(t)
	e := newE2E(t, remoteScripts(), waveOpts{More: remoteExecutor(url)})
	e.startWorker(url, "w1")
	env := e.env
	e.env = append(append([]string(nil), env...), "CADENCE_FAILPOINT=remote-accepted")
	p := e.start(e.applyArgs()...)
	e.env = env
	<-p.done
	if !strings.Contains(e.git(e.repo, "log", "--format=%s", "cadence/w/a"), "a: add f.txt (a)") {
		t.Fatalf("the failpoint did not stop the lead after the accept:\n%s", p.out.String())
	}
	if l := e.lot(e.state(), "a"); len(l.Steps) == 0 || l.Steps[len(l.Steps)-1].Status != state.StepRunning {
		t.Fatalf("lot a after the failpoint: %s", steps(l))
	}
	r := e.apply()
	r.wantCode(t, 0)
	if n := e.sessionsOf("a-implement0"); n != 1 {
		t.Errorf("a-implement0 ran in %d sessions, want 1", n)
	}
	if got, want := e.git(e.repo, "log", "--format=%s", "main"), "a: add f.txt (a)\ninit"; got != want {
		t.Errorf("main:\n%s\nwant:\n%s", got, want)
	}
	l := e.lot(e.state(), "a")
	if l.Status != state.LotDone {
		t.Errorf("lot a %s: %s", l.Status, l.Cause)
	}
	t.Logf("lot a: %s", steps(l))
}

// TestE2ERemoteDropNow: `cadence drop -now a` while lot a's session runs
// on a worker: the run is canceled there (its cancel key) and the
// session's process tree ends within a bounded wait; the lot is dropped
// as a local one is (its step interrupted), and apply ends needing the
// lead.
func TestE2ERemoteDropNow(t *testing.T) {
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
	begun := time.Now()
	d := e.cadence("drop", e.wave, "a", "-now")
	d.wantCode(t, 0)
	if left := goneWithin(30*time.Second, session); len(left) > 0 {
		t.Errorf("the remote session's processes are left:\n%s", strings.Join(left, "\n"))
	}
	t.Logf("the remote session was gone %s after drop -now began", time.Since(begun).Round(100*time.Millisecond))
	r := p.wait()
	r.wantCode(t, 1)
	l := e.lot(e.state(), "a")
	if l.Status != state.LotHandedBack || !strings.Contains(l.Cause, "dropped") {
		t.Errorf("lot a %s (%s): %s", l.Status, steps(l), l.Cause)
	}
	if impl := stepsOf(l, state.StepImplement); len(impl) != 1 || impl[0].Status != state.StepInterrupted {
		t.Errorf("lot a's steps: %s, want one implement, interrupted", steps(l))
	}
}
