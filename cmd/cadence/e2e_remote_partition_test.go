//go:build unix

package main

import (
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine"
	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// tcpProxy forwards a loopback port to an engine: a worker connected
// through it is cut off from the engine by cut and reaches it again
// after heal (same port).
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

// startProxy forwards a free loopback port to the engine at engineURL;
// it is closed when the test ends.
func startProxy(t *testing.T, engineURL string) *tcpProxy {
	t.Helper()
	u, err := url.Parse(engineURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, target: u.Host}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

// URL is the engine's URL through the proxy.
func (p *tcpProxy) URL() string { return "nats://" + p.addr }

func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

// cut closes the listener and every forwarded connection: the worker's
// reconnects are refused until heal.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// heal listens on the same port again.
func (p *tcpProxy) heal() {
	p.t.Helper()
	var ln net.Listener
	if !testutil.Eventually(10*time.Second, func() bool {
		var err error
		ln, err = net.Listen("tcp", p.addr)
		return err == nil
	}) {
		p.t.Fatalf("proxy: cannot listen on %s again", p.addr)
	}
	p.serve(ln)
}

// TestE2ERemotePartitionedWorker: worker w1 reaches the engine through a
// proxy, which is cut while w1 runs lot a's implement session. Within one
// lease (2s, plus the bounded wait of the check) w1 fences itself: the
// session's process tree is gone. The job is delivered again to w2, which
// runs it in a second session; the proxy heals once w2 owns the run, and
// w1's late answer is refused: the lot's commits are the second session's
// only, the lot is done.
func TestE2ERemotePartitionedWorker(t *testing.T) {
	needSandbox(t)
	engineURL := startEngine(t)
	proxy := startProxy(t, engineURL)
	scripts := remoteScripts()
	scripts["a-implement0"] = fakeapi.Script{fakeapi.Bash("sleep 120 && echo stale > stale.txt && git add stale.txt && git commit -qm 'a: stale'"), writeDone("stale")}
	scripts["a-implement0~2"] = fakeapi.Script{commit("g.txt", "g"), writeDone("added g.txt")}
	e := newE2E(t, scripts, waveOpts{More: remoteExecutor(engineURL)})
	e.startWorker(proxy.URL(), "w1")
	p, session := e.startUntilTurn("a-implement0", 1)
	if !testutil.Eventually(30*time.Second, func() bool { return len(marked("CADENCE_SESSION="+session)) > 0 }) {
		t.Fatal("the session never ran on w1")
	}
	e.startWorker(engineURL, "w2")
	cut := time.Now()
	proxy.cut()
	if left := goneWithin(15*time.Second, session); len(left) > 0 {
		t.Fatalf("the partitioned worker's session is left:\n%s", strings.Join(left, "\n"))
	}
	t.Logf("the partitioned worker's session was gone %s after the cut", time.Since(cut).Round(100*time.Millisecond))
	if !testutil.Eventually(time.Minute, func() bool { return len(e.turns("a-implement0~2")) > 0 }) {
		t.Fatal("the job was not delivered again")
	}
	proxy.heal()
	r := p.wait()
	r.wantCode(t, 0)
	if got, want := e.git(e.repo, "log", "--format=%s", "main"), "a: add g.txt (a)\ninit"; got != want {
		t.Errorf("main:\n%s\nwant:\n%s", got, want)
	}
	l := e.lot(e.state(), "a")
	if l.Status != state.LotDone {
		t.Errorf("lot a %s: %s", l.Status, l.Cause)
	}
	impl := stepsOf(l, state.StepImplement)
	if len(impl) == 0 || impl[len(impl)-1].Remote == nil || impl[len(impl)-1].Remote.Worker != "w2" {
		t.Errorf("implement steps %+v: want the last on w2", impl)
	}
	t.Logf("lot a: %s", steps(l))
}

// TestE2ERemoteEngineRestart: the engine is stopped while lot a's session
// runs on worker w1 (after its first commit was checkpointed), and
// started again 4s later (longer than the 2s lease) on the same port and
// store. Meanwhile the worker's renewals fail: its step lives on until a
// lease passed since the last renewal, then it fences itself (its tree
// ended); the lead's await and the worker retry, bounded, until the
// engine is back. Then the job is delivered again, resumed from the
// checkpoint, and the wave completes: each commit on main once.
func TestE2ERemoteEngineRestart(t *testing.T) {
	needSandbox(t)
	store := t.TempDir()
	eng := enginetest.StartStore(t, store)
	engineURL := eng.URL()
	createTeam(t, engineURL)
	scripts := remoteScripts()
	scripts["a-implement0"] = fakeapi.Script{commit("f.txt", "f"), fakeapi.Bash("sleep 120"), writeDone("never")}
	scripts["a-implement0~2"] = fakeapi.Script{commit("g.txt", "g"), writeDone("added g.txt")}
	e := newE2E(t, scripts, waveOpts{More: remoteExecutor(engineURL)})
	e.startWorker(engineURL, "w1")
	p, session := e.startUntilTurn("a-implement0", 2)
	if !checkpointed(t, engineURL, time.Minute) {
		t.Fatal("no checkpoint of the first commit")
	}
	eng.Shutdown()
	stopped := time.Now()
	time.Sleep(time.Second)
	if len(marked("CADENCE_SESSION="+session)) == 0 {
		t.Errorf("the session was killed within a second of the engine stopping (lease 2s)")
	}
	if left := goneWithin(15*time.Second, session); len(left) > 0 {
		t.Errorf("the fenced session is left:\n%s", strings.Join(left, "\n"))
	}
	t.Logf("the session was gone %s after the engine stopped", time.Since(stopped).Round(100*time.Millisecond))
	time.Sleep(4*time.Second - time.Since(stopped))
	u, _ := url.Parse(engineURL)
	again, err := engine.Start(engine.Options{Listen: u.Host, StoreDir: store})
	if err != nil {
		t.Fatalf("restart the engine: %v", err)
	}
	t.Cleanup(again.Shutdown)
	r := p.wait()
	r.wantCode(t, 0)
	if got, want := e.git(e.repo, "log", "--format=%s", "main"), "a: add g.txt (a)\na: add f.txt (a)\ninit"; got != want {
		t.Errorf("main:\n%s\nwant:\n%s", got, want)
	}
	l := e.lot(e.state(), "a")
	if l.Status != state.LotDone {
		t.Errorf("lot a %s: %s", l.Status, l.Cause)
	}
	t.Logf("lot a: %s", steps(l))
}
