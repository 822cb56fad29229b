package cli

import (
	"context"
	"fmt"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cadence-run/cadence/executor/remote/engine"
	"github.com/cadence-run/cadence/executor/remote/queue"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of a queue `cadence engine -queue` creates (docs/remote.md,
// "Engine").
const (
	defaultQueueLease      = 30 * time.Second
	defaultQueueMaxDeliver = 5
)

// queueSpec is one -queue NAME:CAP[:LEASE].
type queueSpec struct {
	name  string
	cap   int
	lease time.Duration
}

// parseQueueSpec reads NAME:CAP[:LEASE].
func parseQueueSpec(s string) (queueSpec, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return queueSpec{}, fmt.Errorf("-queue %q: want NAME:CAP or NAME:CAP:LEASE (team:24, team:24:1m)", s)
	}
	q := queueSpec{name: parts[0], lease: defaultQueueLease}
	if !queue.ValidName(q.name) {
		return queueSpec{}, fmt.Errorf("-queue %q: a queue name is 1 to 32 letters, digits, '-' or '_'", s)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 1 {
		return queueSpec{}, fmt.Errorf("-queue %q: the cap %q is not a number of at least 1", s, parts[1])
	}
	q.cap = n
	if len(parts) == 3 {
		d, err := time.ParseDuration(parts[2])
		if err != nil || d < time.Second {
			return queueSpec{}, fmt.Errorf("-queue %q: the lease %q is not a duration of at least 1s", s, parts[2])
		}
		q.lease = d
	}
	return q, nil
}

func runEngine(e *env, args []string) ExitCode {
	fs := newFlags(e, "engine", "", "Run an embedded NATS JetStream server, the engine of remote steps, until SIGINT, SIGTERM\nor SIGHUP, and create the queues given. It listens on loopback unless TLS is given, and\nkeeps its store (jobs, results, git bundles: source code and briefs) in -store.")
	listen := fs.String("listen", engine.DefaultListen, "host:port to listen on (port 0: any free port); not loopback needs -tls-cert and -tls-key")
	store := fs.String("store", "", "the JetStream store folder (default $CADENCE_HOME/engine)")
	var queues listFlag
	fs.Var(&queues, "queue", "create or update a queue: NAME:CAP[:LEASE] (team:24, team:24:1m; lease default 30s) (repeatable)")
	maxDeliver := fs.Int("max-deliver", defaultQueueMaxDeliver, "lost deliveries before a job is handed back, of the queues given")
	var tls engine.TLSFiles
	fs.StringVar(&tls.Cert, "tls-cert", "", "TLS certificate (PEM)")
	fs.StringVar(&tls.Key, "tls-key", "", "TLS key (PEM)")
	fs.StringVar(&tls.CA, "tls-ca", "", "CA (PEM) whose client certificates are required")
	config := fs.String("config", "", "a nats-server configuration file: accounts, users, permissions")
	pos, code := fs.parse(e, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(e.stderr, "cadence engine: takes no argument (got %q)\n", pos[0])
		return ExitUsage
	}
	if *maxDeliver < 1 {
		fmt.Fprintln(e.stderr, "cadence engine: -max-deliver must be at least 1")
		return ExitUsage
	}
	var specs []queueSpec
	for _, s := range queues {
		q, err := parseQueueSpec(s)
		if err != nil {
			fmt.Fprintf(e.stderr, "cadence engine: %v\n", err)
			return ExitUsage
		}
		specs = append(specs, q)
	}
	if *store == "" {
		*store = filepath.Join(e.cadenceHome(), "engine")
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	eng, err := engine.Start(engine.Options{Listen: *listen, StoreDir: *store, TLS: tls, ConfigFile: *config})
	if err != nil {
		fmt.Fprintf(e.stderr, "cadence engine: %v\n", err)
		return ExitError
	}
	defer eng.Shutdown()
	if err := createQueues(ctx, eng, specs, *maxDeliver); err != nil {
		fmt.Fprintf(e.stderr, "cadence engine: %v\n", err)
		return ExitError
	}
	for _, q := range specs {
		fmt.Fprintf(e.stdout, "queue %s: cap %d, lease %s, max deliver %d\n", q.name, q.cap, q.lease, *maxDeliver)
	}
	fmt.Fprintf(e.stdout, "engine ready on %s (store %s)\n", eng.URL(), *store)
	<-ctx.Done()
	fmt.Fprintln(e.stdout, "engine stopping")
	return ExitOK
}

// createQueues creates the queues on eng, through an in-process client
// connection of its own (closed before it returns).
func createQueues(ctx context.Context, eng *engine.Engine, specs []queueSpec, maxDeliver int) error {
	if len(specs) == 0 {
		return nil
	}
	nc, err := eng.Connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, q := range specs {
		if _, err := queue.CreateQueue(ctx, js, q.name, q.cap, q.lease, maxDeliver); err != nil {
			return err
		}
	}
	return nil
}
