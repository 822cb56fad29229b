//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/cadence-run/cadence/internal/testutil"
)

// TestE2ERemoteAuthTLS: `cadence engine -auth -tls-cert -tls-key` as a
// process of its own; two workers with the worker seed it made, the wave
// with the lead's seed, both over tls:// trusting the test's CA
// (SSL_CERT_FILE): the wave runs remotely and integrates; a worker with
// the lead's URL as nats:// is refused, naming tls://.
func TestE2ERemoteAuthTLS(t *testing.T) {
	needSandbox(t)
	certs := t.TempDir()
	files, ca := enginetest.Certs(t, certs)
	auth := filepath.Join(t.TempDir(), "auth")
	e := remoteWorld(t, "")
	e.env = append(e.env, "SSL_CERT_FILE="+ca)
	eng := e.start("engine", "-listen", "127.0.0.1:0", "-store", t.TempDir(), "-queue", "team:2:2s", "-max-deliver", "3",
		"-auth", auth, "-tls-cert", files.Cert, "-tls-key", files.Key)
	ready := regexp.MustCompile(`engine ready on (tls://127\.0\.0\.1:[0-9]+)`)
	var url string
	if !testutil.Eventually(time.Minute, func() bool {
		m := ready.FindStringSubmatch(eng.out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}) {
		t.Fatalf("engine not ready:\n%s", eng.out.String())
	}
	lead, worker := filepath.Join(auth, "lead.nk"), filepath.Join(auth, "worker-team.nk")
	wave, err := os.ReadFile(e.wave)
	if err != nil {
		t.Fatal(err)
	}
	e.writeFile(e.wave, string(wave)+"\nexecutor \"nats\" {\n  url         = \""+url+"\"\n  queue       = \"team\"\n  credentials = \""+lead+"\"\n  lease       = \"2s\"\n}\n")

	plain := e.start("worker", "-engine", "nats://"+strings.TrimPrefix(url, "tls://"), "-queue", "team", "-credentials", worker).wait()
	if plain.code == 0 || !strings.Contains(plain.out, "requires TLS: use tls://") {
		t.Errorf("a worker on nats:// of a TLS engine: exit %d\n%s", plain.code, plain.out)
	}
	e.startWorker(url, "w1", "-credentials", worker)
	e.startWorker(url, "w2", "-credentials", worker)
	e.apply().wantCode(t, 0)
	st := e.state()
	remote := 0
	for _, id := range []string{"a", "b"} {
		l := e.lot(st, id)
		if l.Status != state.LotDone {
			t.Errorf("lot %s %s: %s", id, l.Status, l.Cause)
		}
		for _, s := range l.Steps {
			if s.Remote != nil {
				remote++
			}
		}
	}
	if remote == 0 {
		t.Error("no step ran remotely")
	}
	if got := e.git(filepath.Join(e.dir, "lib"), "log", "--format=%s", "main"); !strings.Contains(got, "b: add lib.txt") {
		t.Errorf("lib's main: %s", got)
	}
}

// TestE2ERemoteAgentSettings: the lead's agent block travels with the job:
// a lot whose agent sets append_system_prompt and whose model is not the
// default runs on a worker, and the session's requests to the API carry
// both.
func TestE2ERemoteAgentSettings(t *testing.T) {
	needSandbox(t)
	url := startEngine(t)
	e := newE2E(t, remoteScripts(), waveOpts{
		Agent: "  append_system_prompt = \"REMOTE-SETTING-Q7\"",
		Lot:   "  model = \"claude-sonnet-5-5\"",
		More:  remoteExecutor(url),
	})
	e.startWorker(url, "w1")
	e.apply().wantCode(t, 0)
	turns := e.turns("a-implement0")
	if len(turns) == 0 {
		t.Fatal("no request of a's implement session")
	}
	for _, r := range turns {
		if r.Model != "claude-sonnet-5-5" {
			t.Errorf("request model %q, want claude-sonnet-5-5", r.Model)
		}
		if !r.Contains("REMOTE-SETTING-Q7") {
			t.Errorf("request without the agent's append_system_prompt")
		}
	}
	if l := e.lot(e.state(), "a"); l.Status != state.LotDone || l.Steps[0].Remote == nil {
		t.Errorf("lot a %s (%s), first step remote %v", l.Status, l.Cause, l.Steps[0].Remote)
	}
}
