//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/cadence-run/cadence/executor/remote/transport"
	"github.com/cadence-run/cadence/executor/step"
	"github.com/cadence-run/cadence/internal/state"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// hostileWorker serves queue team on the engine at url, in this process,
// with a handler that forges each job's result: forge makes the result
// bundle of the job's lot in a clone of what the lead sent (its only
// repository) and returns the bundle's path. It stops when the test ends.
func (e *e2e) hostileWorker(url string, forge func(lot, clone, branch string) string) {
	t := e.t
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithCancel(context.Background())
	q, err := queue.Open(ctx, js, "team")
	if err != nil {
		t.Fatal(err)
	}
	tr := transport.New(e.env)
	handler := func(c context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
		var w remote.Work
		if err := json.Unmarshal(job.Request, &w); err != nil {
			return queue.Result{}, err
		}
		dir := t.TempDir()
		files := map[string]string{}
		for _, name := range []string{w.Repos[0].Base, w.Repos[0].Lot} {
			var buf bytes.Buffer
			if err := q.GetBundle(c, name, &buf, queue.DefaultMaxBundleBytes); err != nil {
				return queue.Result{}, err
			}
			files[name] = filepath.Join(dir, name+".bundle")
			if err := os.WriteFile(files[name], buf.Bytes(), 0o644); err != nil {
				return queue.Result{}, err
			}
		}
		clone := filepath.Join(dir, "clone")
		if _, err := tr.Checkout(c, clone, files[w.Repos[0].Base], files[w.Repos[0].Lot], w.Request.Branch); err != nil {
			return queue.Result{}, err
		}
		f, err := os.Open(forge(job.Lot, clone, w.Request.Branch))
		if err != nil {
			return queue.Result{}, err
		}
		defer f.Close()
		name := remote.ResultName(w.Repos[0], p.Delivery())
		if err := q.PutBundle(c, name, f, queue.DefaultMaxBundleBytes); err != nil {
			return queue.Result{}, err
		}
		raw, _ := json.Marshal(step.Result{Status: state.StepOK})
		return queue.Result{Result: raw, Bundles: []string{name}}, nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Serve(ctx, queue.WorkerOptions{ID: "evil", Slots: 2, Handler: handler})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("the hostile worker did not stop")
		}
		nc.Close()
	})
}

// TestE2ERemoteHostileWorker: a worker that forges its results (this
// process, on the queue's API): lot a's bundle also names refs/heads/main,
// lot b's head does not descend from what was sent (a history of its
// own). apply refuses both before fetching anything: an incident in its
// output and in the state for each lot, which is not done; main and the
// lots' branches are as they were; each refused bundle is kept beside its
// step's log.
func TestE2ERemoteHostileWorker(t *testing.T) {
	needSandbox(t)
	url := startEngine(t)
	e := newE2E(t, remoteScripts(), waveOpts{Repo: "  parallel = 2", More: remoteExecutor(url) + `
lot "b" {
  repo  = repo.app
  title = "Add g"
  brief = "Add the file g.txt."
}
`})
	mainBefore := e.git(e.repo, "rev-parse", "main")
	e.hostileWorker(url, func(lot, clone, branch string) string {
		out := filepath.Join(t.TempDir(), "forged.bundle")
		switch lot {
		case "a":
			e.git(clone, "commit", "-q", "--allow-empty", "-m", "evil main")
			e.git(clone, "branch", "-f", "main", "HEAD")
			e.git(clone, "bundle", "create", "-q", out, "refs/heads/main", "refs/heads/"+branch)
		default:
			e.git(clone, "checkout", "-q", "--orphan", "rewritten")
			e.git(clone, "commit", "-q", "--allow-empty", "-m", "rewritten history")
			e.git(clone, "branch", "-f", branch, "HEAD")
			e.git(clone, "bundle", "create", "-q", out, "refs/heads/"+branch)
		}
		return out
	})
	r := e.apply()
	r.wantCode(t, 1)
	r.wantOut(t, `incident: the result of worker evil for app was refused and nothing of it applied: result bundle refused \(refs\)`,
		`incident: the result of worker evil for app was refused and nothing of it applied: result bundle refused \(not-descendant\)`)
	if got := e.git(e.repo, "rev-parse", "main"); got != mainBefore {
		t.Errorf("main moved to %s", got)
	}
	st := e.state()
	for _, id := range []string{"a", "b"} {
		l := e.lot(st, id)
		if l.Status == state.LotDone || !strings.Contains(l.Cause, "incident: the result of worker evil") {
			t.Errorf("lot %s %s: %s", id, l.Status, l.Cause)
		}
		if got := e.git(e.repo, "rev-parse", "cadence/w/"+id); got != mainBefore {
			t.Errorf("lot %s's branch moved to %s", id, got)
		}
	}
	for _, id := range []string{"a", "b"} {
		impl := stepsOf(e.lot(st, id), state.StepImplement)
		if len(impl) != 1 || !strings.Contains(impl[0].Cause, "incident: the result of worker evil") {
			t.Errorf("lot %s's implement steps %+v: want one, its cause the incident", id, impl)
		}
	}
	var kept []string
	_ = filepath.WalkDir(e.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".result.app.d1.bundle") {
			kept = append(kept, p)
		}
		return nil
	})
	if len(kept) != 2 {
		t.Errorf("kept bundles %v, want lot a's and lot b's", kept)
	}
}
