package mergequeue

import (
	"context"
	"sync"
	"time"

	"github.com/cadence-run/cadence/spec"
)

// repoQueue is one repository's queue of lots waiting to integrate.
type repoQueue struct {
	mu      sync.Mutex
	waiting []*queued
	leading bool
	// coming counts the lots of the repository whose own test gate runs
	// now and that come to integrate next (ComingUp). changed is closed
	// when coming or waiting changes; lastGate is how long the
	// repository's last gate run took.
	coming   int
	changed  chan struct{}
	lastGate time.Duration
}

// signalLocked wakes a leader waiting for lots to come (rq.mu held).
func (rq *repoQueue) signalLocked() {
	if rq.changed != nil {
		close(rq.changed)
		rq.changed = nil
	}
}

// awaitComing waits, before a batch is taken, for the lots whose own test
// gate runs now (they finished together with the lots waiting, and would
// otherwise make a batch of their own right after this one), but no longer
// than the repository's last gate run took: a gate that runs longer than
// that is not waited for.
func (rq *repoQueue) awaitComing(ctx context.Context) {
	rq.mu.Lock()
	bound := rq.lastGate
	rq.mu.Unlock()
	if bound <= 0 {
		return
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		rq.mu.Lock()
		if rq.coming == 0 {
			rq.mu.Unlock()
			return
		}
		if rq.changed == nil {
			rq.changed = make(chan struct{})
		}
		ch := rq.changed
		rq.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// of is repository rp's queue.
func (q *Queue) of(rp *spec.Repo) *repoQueue {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queues == nil {
		q.queues = map[*spec.Repo]*repoQueue{}
	}
	rq := q.queues[rp]
	if rq == nil {
		rq = &repoQueue{}
		q.queues[rp] = rq
	}
	return rq
}

// NoteGate records how long a gate run of rp took: the bound of a
// leader's wait for lots coming (awaitComing).
func (q *Queue) NoteGate(rp *spec.Repo, d time.Duration) {
	rq := q.of(rp)
	rq.mu.Lock()
	rq.lastGate = d
	rq.mu.Unlock()
}

// ComingUp says that a lot of rp runs its own test gate, after which it
// comes to integrate through the queue: its Integrate (Lot.Coming), or
// NotComing, says it no longer comes.
func (q *Queue) ComingUp(rp *spec.Repo) {
	rq := q.of(rp)
	rq.mu.Lock()
	rq.coming++
	rq.mu.Unlock()
}

// NotComing undoes ComingUp for a lot that ended without integrating.
func (q *Queue) NotComing(rp *spec.Repo) {
	rq := q.of(rp)
	rq.mu.Lock()
	rq.coming--
	rq.signalLocked()
	rq.mu.Unlock()
}

// queued is a lot in the queue; the leader sends its result on done.
type queued struct {
	lot  Lot
	done chan Result
	// pre is where its branch was when its batch took it; from is the
	// commit its own commits sit on once rebased, tip its rebased tip.
	pre, from, tip string
	stacked        bool
}

// enqueue puts the lot in its repository's queue and waits for its
// batch's result; the first lot in an idle queue starts the leader.
func (q *Queue) enqueue(lot Lot) (Result, error) {
	rp := lot.own().Spec
	rq := q.of(rp)
	it := &queued{lot: lot, done: make(chan Result, 1)}
	rq.mu.Lock()
	rq.waiting = append(rq.waiting, it)
	if lot.Coming {
		rq.coming--
	}
	rq.signalLocked()
	lead := !rq.leading
	rq.leading = true
	rq.mu.Unlock()
	if lead {
		go q.lead(rq, rp)
	}
	res := <-it.done
	return res, res.err
}

// lead runs batches of rq until it is empty, under the run's context: a
// lot's own ends with the lot.
func (q *Queue) lead(rq *repoQueue, rp *spec.Repo) {
	ctx := q.c.Run()
	var again []*queued
	for {
		unlock, err := q.c.Git.LockIntegration(ctx, rp, q.wave())
		if err == nil {
			rq.awaitComing(ctx)
		}
		rq.mu.Lock()
		batch := append(again, rq.waiting...)
		rq.waiting, again = nil, nil
		rq.mu.Unlock()
		if err != nil {
			res := Result{Kind: Waits, Cause: "integration lock: " + err.Error()}
			if ctx.Err() != nil {
				res = Result{Kind: Interrupted, Cause: "stopped by cadence"}
			}
			for _, it := range batch {
				it.done <- res
			}
		} else {
			again = q.integrateBatch(ctx, rp, batch)
			unlock()
		}
		rq.mu.Lock()
		if len(again) == 0 && len(rq.waiting) == 0 {
			rq.leading = false
			rq.mu.Unlock()
			return
		}
		rq.mu.Unlock()
	}
}
