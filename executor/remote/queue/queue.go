// Package queue is the job queue of remote steps over NATS JetStream
// (docs/remote.md "Queue"): one named queue is a team's pool of workers.
// The coordinator submits jobs and awaits their results; workers serve
// them under a lease they extend, fencing themselves when they cannot.
// Jobs and results carry step requests and results as JSON: the queue
// knows nothing of the step package.
package queue

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Names of a queue's JetStream objects (docs/remote.md "Queue").
const (
	// Consumer is the durable pull consumer every worker pulls from.
	Consumer = "workers"
	// resultTTL is how long results and cancel keys are kept.
	resultTTL = 24 * time.Hour
	// dedupWindow is how long a job's run key dedups a second Submit in
	// the stream itself (the runs and results buckets dedup after).
	dedupWindow = time.Hour
)

// StreamName is the stream of queue name's jobs.
func StreamName(name string) string { return "CADENCE_JOBS_" + name }

// Subject is the subject queue name's jobs are published on.
func Subject(name string) string { return "cadence." + name + ".jobs" }

// bucket is the name of one of the queue's KV buckets or of its object
// store: CADENCE_<name>_<what>.
func bucket(name, what string) string { return "CADENCE_" + name + "_" + what }

var (
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	runKeyRE = regexp.MustCompile(`^[A-Za-z0-9_=-]+(\.[A-Za-z0-9_=-]+)*$`)
)

// ValidName says whether name can name a queue: 1 to 32 letters, digits,
// '-' or '_'.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// ValidRunKey says whether key can be a run key: at most 200 letters,
// digits, '-', '_' and '=', in tokens joined by single dots.
func ValidRunKey(key string) bool { return len(key) <= 200 && runKeyRE.MatchString(key) }

// Queue is one named queue on a JetStream connection.
type Queue struct {
	name       string
	js         jetstream.JetStream
	stream     jetstream.Stream
	consumer   jetstream.Consumer
	lease      time.Duration
	maxDeliver int
	runs       jetstream.KeyValue
	cancel     jetstream.KeyValue
	workers    jetstream.KeyValue
	results    jetstream.KeyValue
	bundles    jetstream.ObjectStore
}

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

// Lease is the queue's lease (the consumer's AckWait).
func (q *Queue) Lease() time.Duration { return q.lease }

// MaxDeliver is how many deliveries of a job may be lost before the job
// is handed back as lost.
func (q *Queue) MaxDeliver() int { return q.maxDeliver }

// CreateQueue creates queue name, or updates it to these settings: its
// WorkQueue stream, its consumer with pool cap poolCap (MaxAckPending,
// counted across all workers), AckWait lease and maxDeliver lost
// deliveries before a job is handed back, its KV buckets and its bundles
// object store.
func CreateQueue(ctx context.Context, js jetstream.JetStream, name string, poolCap int, lease time.Duration, maxDeliver int) (*Queue, error) {
	switch {
	case !ValidName(name):
		return nil, fmt.Errorf("queue %q: a name is 1 to 32 letters, digits, '-' or '_'", name)
	case poolCap < 1:
		return nil, fmt.Errorf("queue %s: cap %d: at least 1", name, poolCap)
	case lease < 300*time.Millisecond:
		return nil, fmt.Errorf("queue %s: lease %s: at least 300ms", name, lease)
	case maxDeliver < 1:
		return nil, fmt.Errorf("queue %s: max deliver %d: at least 1", name, maxDeliver)
	}
	stream, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       StreamName(name),
		Subjects:   []string{Subject(name)},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    jetstream.FileStorage,
		Duplicates: dedupWindow,
	})
	if err != nil {
		return nil, fmt.Errorf("queue %s: stream: %w", name, err)
	}
	// One more delivery than maxDeliver: the extra one writes the lost
	// result (worker.go, serveLost).
	if _, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       Consumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       lease,
		MaxAckPending: poolCap,
		MaxDeliver:    maxDeliver + 1,
		MaxWaiting:    4096,
	}); err != nil {
		return nil, fmt.Errorf("queue %s: consumer: %w", name, err)
	}
	kvs := []jetstream.KeyValueConfig{
		{Bucket: bucket(name, "runs"), TTL: resultTTL, Storage: jetstream.FileStorage},
		{Bucket: bucket(name, "cancel"), TTL: resultTTL, Storage: jetstream.FileStorage},
		// a heartbeat lives three leases after it was written
		{Bucket: bucket(name, "workers"), TTL: 3 * lease, Storage: jetstream.FileStorage},
		{Bucket: bucket(name, "results"), TTL: resultTTL, Storage: jetstream.FileStorage},
	}
	for _, cfg := range kvs {
		if _, err := js.CreateOrUpdateKeyValue(ctx, cfg); err != nil {
			return nil, fmt.Errorf("queue %s: bucket %s: %w", name, cfg.Bucket, err)
		}
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: bucket(name, "bundles"), TTL: resultTTL, Storage: jetstream.FileStorage}); err != nil {
		return nil, fmt.Errorf("queue %s: bundles: %w", name, err)
	}
	return Open(ctx, js, name)
}

// ErrNoQueue is returned by Open for a queue that was never created.
var ErrNoQueue = errors.New("no such queue")

// Open opens queue name, created before (CreateQueue, `cadence engine
// -queue`); its lease and max deliver are read from its consumer.
func Open(ctx context.Context, js jetstream.JetStream, name string) (*Queue, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("queue %q: a name is 1 to 32 letters, digits, '-' or '_'", name)
	}
	q := &Queue{name: name, js: js}
	var err error
	if q.stream, err = js.Stream(ctx, StreamName(name)); err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("queue %s: %w", name, ErrNoQueue)
		}
		return nil, fmt.Errorf("queue %s: stream: %w", name, err)
	}
	if q.consumer, err = q.stream.Consumer(ctx, Consumer); err != nil {
		return nil, fmt.Errorf("queue %s: consumer: %w", name, err)
	}
	cfg := q.consumer.CachedInfo().Config
	q.lease, q.maxDeliver = cfg.AckWait, cfg.MaxDeliver-1
	for _, b := range []struct {
		kv   *jetstream.KeyValue
		what string
	}{{&q.runs, "runs"}, {&q.cancel, "cancel"}, {&q.workers, "workers"}, {&q.results, "results"}} {
		if *b.kv, err = js.KeyValue(ctx, bucket(name, b.what)); err != nil {
			return nil, fmt.Errorf("queue %s: bucket %s: %w", name, b.what, err)
		}
	}
	if q.bundles, err = js.ObjectStore(ctx, bucket(name, "bundles")); err != nil {
		return nil, fmt.Errorf("queue %s: bundles: %w", name, err)
	}
	return q, nil
}
