//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/internal/fakeapi"
	"github.com/cadence-run/cadence/internal/testutil"
)

// TestE2EWorkerStepCannotReadWorkerCredentials: a session on a worker
// (an agent a brief or a repository's file talked into it) copies the
// worker's NATS credentials file (its nkey seed) into a commit. The seed
// is the worker's identity on the engine: whoever holds it reads every
// bundle of the queue (every wave's source code) and writes results and
// bundles of any run. A step on the worker must not be able to read it,
// as a local session cannot read the machine's steering keys (DenyRead):
// the lead's main must not end up holding the seed.
func TestE2EWorkerStepCannotReadWorkerCredentials(t *testing.T) {
	needSandbox(t)
	auth := filepath.Join(t.TempDir(), "auth")
	worker := filepath.Join(auth, "worker-team.nk")
	scripts := remoteScripts()
	scripts["a-implement0"] = fakeapi.Script{
		fakeapi.Bash("(cat " + worker + " || echo unreadable) > leak.txt; git add leak.txt && git commit -q -m 'a: add leak.txt (a)'"),
		writeDone("added leak.txt"),
	}
	e := newE2E(t, scripts, waveOpts{})
	eng := e.start("engine", "-listen", "127.0.0.1:0", "-store", t.TempDir(), "-queue", "team:2:2s", "-max-deliver", "3", "-auth", auth)
	ready := regexp.MustCompile(`engine ready on (nats://127\.0\.0\.1:[0-9]+)`)
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
	seed, err := os.ReadFile(worker)
	if err != nil {
		t.Fatal(err)
	}
	wave, err := os.ReadFile(e.wave)
	if err != nil {
		t.Fatal(err)
	}
	e.writeFile(e.wave, string(wave)+"\nexecutor \"nats\" {\n  url         = \""+url+"\"\n  queue       = \"team\"\n  credentials = \""+filepath.Join(auth, "lead.nk")+"\"\n  lease       = \"2s\"\n}\n")
	e.startWorker(url, "w1", "-credentials", worker)
	e.apply()
	if l := e.lot(e.state(), "a"); len(l.Steps) == 0 || l.Steps[0].Remote == nil {
		t.Fatalf("lot a's implement did not run on the worker: %s", steps(l))
	}
	out := e.git(e.repo, "log", "--all", "-p", "--format=%H")
	s := strings.TrimSpace(string(seed))
	if i := strings.Index(s, "SU"); i >= 0 {
		s = s[i:]
	}
	if len(s) > 20 && strings.Contains(out, s[:20]) {
		t.Errorf("a session on the worker read the worker's credentials file: its seed is in the lead's repository")
	} else if !strings.Contains(out, "leak.txt") {
		t.Logf("no leak.txt commit reached the lead:\n%s", out)
	}
}
