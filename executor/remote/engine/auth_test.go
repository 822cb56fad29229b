package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine"
	"github.com/cadence-run/cadence/executor/remote/engine/enginetest"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// authEngine starts an engine whose users are a lead of queues team and
// other and a worker of each, their seeds in dir; it creates both queues
// as the lead, through its in-process connection.
func authEngine(t *testing.T, dir string) *engine.Engine {
	t.Helper()
	lead := seed(t, filepath.Join(dir, "lead.nk"))
	users := []engine.User{user("lead", lead, queue.LeadPermissions([]string{"team", "other"}, engine.InboxPrefix(lead)))}
	for _, q := range []string{"team", "other"} {
		w := seed(t, filepath.Join(dir, "worker-"+q+".nk"))
		users = append(users, user("worker "+q, w, queue.WorkerPermissions(q, engine.InboxPrefix(w))))
	}
	e, err := engine.Start(engine.Options{Listen: "127.0.0.1:-1", StoreDir: t.TempDir(), Users: users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	opts, err := engine.ClientOptions(filepath.Join(dir, "lead.nk"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := e.Connect(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for _, q := range []string{"team", "other"} {
		if _, err := queue.CreateQueue(ctxFor(t, 10*time.Second), js, q, 2, time.Second, 2); err != nil {
			t.Fatalf("the lead creates queue %s: %v", q, err)
		}
	}
	return e
}

func seed(t *testing.T, path string) string {
	t.Helper()
	pub, err := engine.SeedFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func user(name, pub string, p queue.Permissions) engine.User {
	return engine.User{Name: name, NKey: pub, Publish: p.Publish, Subscribe: p.Subscribe}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// client connects to url with the seed file at path; violations collects
// the permission violations the server reported to it.
type client struct {
	nc *nats.Conn
	js jetstream.JetStream
	mu sync.Mutex
	// violations are the server's permission errors, in order.
	violations []string
}

func (c *client) denied() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.violations, "\n")
}

func connectAs(t *testing.T, url, path string, extra ...nats.Option) *client {
	t.Helper()
	c := &client{}
	opts, err := engine.ClientOptions(path)
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, nats.Timeout(5*time.Second), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		c.mu.Lock()
		c.violations = append(c.violations, err.Error())
		c.mu.Unlock()
	}))
	c.nc, err = nats.Connect(url, append(opts, extra...)...)
	if err != nil {
		t.Fatalf("connect as %s: %v", filepath.Base(path), err)
	}
	t.Cleanup(c.nc.Close)
	c.js, _ = jetstream.New(c.nc)
	return c
}

func TestWorkerServesItsQueueOnly(t *testing.T) {
	dir := t.TempDir()
	e := authEngine(t, dir)
	lead := connectAs(t, e.URL(), filepath.Join(dir, "lead.nk"))
	worker := connectAs(t, e.URL(), filepath.Join(dir, "worker-team.nk"))

	lq, err := queue.Open(ctxFor(t, 10*time.Second), lead.js, "team")
	if err != nil {
		t.Fatalf("the lead opens its queue: %v", err)
	}
	wq, err := queue.Open(ctxFor(t, 10*time.Second), worker.js, "team")
	if err != nil {
		t.Fatalf("the worker opens its queue: %v", err)
	}
	// A whole job: submitted, pulled, claimed, renewed, checkpointed,
	// answered, awaited, under the two users' permissions.
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- wq.Serve(ctx, queue.WorkerOptions{ID: "w1", Slots: 1, Handler: func(ctx context.Context, job queue.Job, p *queue.Progress) (queue.Result, error) {
			var b strings.Builder
			if err := wq.GetBundle(ctx, "in", &b, 1<<20); err != nil || b.String() != "base" {
				return queue.Result{}, errors.New("bundle in: " + b.String() + " " + errString(err))
			}
			if err := wq.PutBundle(ctx, "out", strings.NewReader("commits"), 1<<20); err != nil {
				return queue.Result{}, err
			}
			p.Tokens(7)
			return queue.Result{Result: []byte(`{"ok":true}`), Bundles: []string{"out"}}, nil
		}})
	}()
	t.Cleanup(func() { stop(); <-served })
	if err := lq.PutBundle(ctxFor(t, 10*time.Second), "in", strings.NewReader("base"), 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := lq.Submit(ctxFor(t, 10*time.Second), queue.Job{RunKey: "k1", Wave: "w", WaveID: "w1", Lot: "a", Step: "command", Bundles: []string{"in"}}); err != nil {
		t.Fatalf("the lead submits: %v", err)
	}
	r, err := lq.Await(ctxFor(t, 20*time.Second), "k1")
	if err != nil || r.Error != "" || string(r.Result) != `{"ok":true}` {
		t.Fatalf("result = %+v, %v (worker denied: %s)", r, err, worker.denied())
	}
	var out strings.Builder
	if err := lq.GetBundle(ctxFor(t, 10*time.Second), "out", &out, 1<<20); err != nil || out.String() != "commits" {
		t.Fatalf("the lead reads the result bundle: %q, %v", out.String(), err)
	}
	if err := lq.Cancel(ctxFor(t, 10*time.Second), "k1", "test"); err != nil {
		t.Errorf("the lead cancels: %v", err)
	}
	if _, err := lq.Pool(ctxFor(t, 10*time.Second)); err != nil {
		t.Errorf("the lead reads the pool: %v", err)
	}
	if hbs, err := lq.Workers(ctxFor(t, 10*time.Second)); err != nil || len(hbs) != 1 {
		t.Errorf("the lead reads the heartbeats: %v, %v", hbs, err)
	}
	if d := lead.denied(); d != "" {
		t.Errorf("the lead was denied: %s", d)
	}
	if d := worker.denied(); d != "" {
		t.Errorf("the worker was denied: %s", d)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestWorkerCannot(t *testing.T) {
	dir := t.TempDir()
	e := authEngine(t, dir)
	w := connectAs(t, e.URL(), filepath.Join(dir, "worker-team.nk"))
	short := func() context.Context { return ctxFor(t, 2*time.Second) }
	for _, tc := range []struct {
		what string
		do   func() error
	}{
		{"create a stream", func() error {
			_, err := w.js.CreateStream(short(), jetstream.StreamConfig{Name: "MINE", Subjects: []string{"mine"}})
			return err
		}},
		{"delete its queue's consumer", func() error { return w.js.DeleteConsumer(short(), queue.StreamName("team"), queue.Consumer) }},
		{"create a consumer on its queue's stream", func() error {
			_, err := w.js.CreateOrUpdateConsumer(short(), queue.StreamName("team"), jetstream.ConsumerConfig{Durable: "mine", AckPolicy: jetstream.AckExplicitPolicy})
			return err
		}},
		{"publish a job", func() error {
			_, err := w.js.Publish(short(), queue.Subject("team"), []byte(`{"run_key":"x"}`))
			return err
		}},
		{"write a cancel key", func() error {
			kv, err := w.js.KeyValue(short(), "CADENCE_team_cancel")
			if err != nil {
				return err
			}
			_, err = kv.PutString(short(), "k", "no")
			return err
		}},
		{"open another queue", func() error {
			_, err := queue.Open(short(), w.js, "other")
			return err
		}},
		{"pull another queue", func() error {
			// any answer, "no messages" included, is an allowed pull
			_, err := w.nc.Request("$JS.API.CONSUMER.MSG.NEXT."+queue.StreamName("other")+"."+queue.Consumer, []byte(`{"batch":1,"no_wait":true}`), 2*time.Second)
			return err
		}},
		{"read another queue's results", func() error {
			_, err := w.js.KeyValue(short(), "CADENCE_other_results")
			return err
		}},
		{"read another queue's cancel keys", func() error {
			_, err := w.nc.Request("$JS.API.DIRECT.GET.KV_CADENCE_other_cancel.$KV.CADENCE_other_cancel.k", nil, 2*time.Second)
			return err
		}},
		{"subscribe to others' replies", func() error {
			_, err := w.nc.SubscribeSync("_INBOX.>")
			if err == nil {
				err = w.nc.Flush()
			}
			time.Sleep(200 * time.Millisecond) // the server's -ERR is asynchronous
			if strings.Contains(w.denied(), `Subscription to "_INBOX.>"`) {
				return errors.New("denied")
			}
			return err
		}},
		// last: were it allowed, the cases above would pass for want of
		// a stream
		{"delete its queue's stream", func() error { return w.js.DeleteStream(short(), queue.StreamName("team")) }},
	} {
		if err := tc.do(); err == nil {
			t.Errorf("a worker could %s", tc.what)
		}
	}
	// The lead of both queues can publish a job of either.
	lead := connectAs(t, e.URL(), filepath.Join(dir, "lead.nk"))
	if _, err := lead.js.Publish(ctxFor(t, 5*time.Second), queue.Subject("other"), []byte(`{"run_key":"x"}`)); err != nil {
		t.Errorf("the lead cannot publish a job: %v", err)
	}
	// Without credentials, nothing.
	if nc, err := nats.Connect(e.URL(), nats.Timeout(5*time.Second)); err == nil {
		nc.Close()
		t.Error("a client without credentials connected")
	}
}

func TestSeedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth", "w.nk")
	pub, err := engine.SeedFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("seed file mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
	if again, err := engine.SeedFile(path); err != nil || again != pub {
		t.Errorf("read again: %q, %v; want %q", again, err, pub)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.ClientOptions(path); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("a seed file readable by others: %v", err)
	}
	other := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(other, []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.ClientOptions(other); err == nil || !strings.Contains(err.Error(), "not an nkey seed") {
		t.Errorf("not a seed: %v", err)
	}
}

func TestTLSClients(t *testing.T) {
	dir := t.TempDir()
	files, ca := enginetest.Certs(t, dir)
	e, err := engine.Start(engine.Options{Listen: "127.0.0.1:-1", StoreDir: t.TempDir(), TLS: files})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	url := e.URL()
	if !strings.HasPrefix(url, "tls://127.0.0.1:") {
		t.Fatalf("URL = %q, want tls://", url)
	}
	nc, err := nats.Connect(url, nats.RootCAs(ca), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("tls:// with the CA: %v", err)
	}
	nc.Close()
	plain := "nats://" + strings.TrimPrefix(url, "tls://")
	_, err = engine.Dial(plain, nats.RootCAs(ca), nats.Timeout(5*time.Second))
	if err == nil || !strings.Contains(err.Error(), "requires TLS: use tls://") {
		t.Errorf("nats:// to a TLS engine: %v, want a refusal naming tls://", err)
	}
	if _, err := engine.Dial(url, nats.Timeout(5*time.Second)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("tls:// without the CA: %v, want a certificate error", err)
	}
}
