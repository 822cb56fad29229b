package queue

// Permissions are the NATS subjects one role of a queue may publish to and
// subscribe to (docs/remote.md, "Security"): nats-server's user
// permissions, allow lists only. The JetStream API subjects are
// nats-server's (server/jetstream_api.go: $JS.API.STREAM.INFO.<stream>,
// $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>, $JS.API.DIRECT.GET.<stream>,
// $JS.ACK.<stream>.<consumer>.…); KV and object store subjects are
// nats.go's ($KV.<bucket>.<key>, $O.<bucket>.C|M.…).
type Permissions struct {
	Publish   []string
	Subscribe []string
}

// The streams behind a queue's KV buckets and object store.
func kvStream(name, what string) string  { return "KV_" + bucket(name, what) }
func objStream(name, what string) string { return "OBJ_" + bucket(name, what) }

// readKV lets a client get keys of a KV stream and watch them (an ordered
// consumer, created on the stream and deleted when the watch stops).
func readKV(stream string) []string {
	return []string{
		"$JS.API.STREAM.INFO." + stream,
		"$JS.API.DIRECT.GET." + stream,
		"$JS.API.DIRECT.GET." + stream + ".>",
		"$JS.API.STREAM.MSG.GET." + stream,
		"$JS.API.CONSUMER.CREATE." + stream,
		"$JS.API.CONSUMER.CREATE." + stream + ".>",
		"$JS.API.CONSUMER.DELETE." + stream + ".*",
	}
}

// WorkerPermissions are what a worker of queue name needs and no more: pull
// from the queue's consumer and acknowledge its deliveries, claim and renew
// run keys, write results and its heartbeat, read (never write) cancel
// keys, read and write bundles. It cannot publish a job, create, update
// or delete a stream or a durable consumer, or reach another queue's
// objects. inbox is the client's inbox prefix (its replies arrive under
// inbox.>): a prefix of its own, so it cannot read other clients' replies.
func WorkerPermissions(name, inbox string) Permissions {
	jobs := StreamName(name)
	pub := []string{
		"$JS.API.INFO",
		"$JS.API.STREAM.INFO." + jobs,
		"$JS.API.CONSUMER.INFO." + jobs + "." + Consumer,
		"$JS.API.CONSUMER.MSG.NEXT." + jobs + "." + Consumer,
		"$JS.ACK." + jobs + "." + Consumer + ".>",
	}
	for _, what := range []string{"runs", "results", "workers", "cancel"} {
		pub = append(pub, readKV(kvStream(name, what))...)
	}
	for _, what := range []string{"runs", "results", "workers"} {
		pub = append(pub, "$KV."+bucket(name, what)+".>")
	}
	obj := objStream(name, "bundles")
	pub = append(pub, readKV(obj)...)
	pub = append(pub, "$O."+bucket(name, "bundles")+".>")
	return Permissions{Publish: pub, Subscribe: []string{inbox + ".>"}}
}

// LeadPermissions are what a lead (the coordinator, and the engine that
// creates the queues) needs on queues names: create or update their
// streams, consumers, buckets and object stores (never delete them),
// publish jobs, read and write every key and bundle. inbox is as in
// WorkerPermissions.
func LeadPermissions(names []string, inbox string) Permissions {
	pub := []string{"$JS.API.INFO"}
	for _, name := range names {
		pub = append(pub, Subject(name))
		streams := []string{StreamName(name), objStream(name, "bundles")}
		for _, what := range []string{"runs", "cancel", "workers", "results"} {
			streams = append(streams, kvStream(name, what))
			pub = append(pub, "$KV."+bucket(name, what)+".>")
		}
		pub = append(pub, "$O."+bucket(name, "bundles")+".>")
		for _, s := range streams {
			pub = append(pub, readKV(s)...)
			pub = append(pub,
				"$JS.API.STREAM.CREATE."+s,
				"$JS.API.STREAM.UPDATE."+s,
				"$JS.API.STREAM.PURGE."+s,
				"$JS.API.CONSUMER.DURABLE.CREATE."+s+".*",
				"$JS.API.CONSUMER.INFO."+s+".*",
			)
		}
	}
	return Permissions{Publish: pub, Subscribe: []string{inbox + ".>"}}
}
