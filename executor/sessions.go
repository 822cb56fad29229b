package executor

import (
	"container/heap"
	"context"
	"sync"
)

// prioritySem is the in-process session cap. It is a counting semaphore
// like golang.org/x/sync/semaphore.Weighted, but its waiters are served by
// the scheduler's priority (longest remaining path, then file order)
// instead of arrival order: lots that started together (their repositories
// had room) then take sessions in the scheduler's order (docs/running.md,
// Order and Caps). Each agent session takes one unit and gives it back
// when it ends, so a lot waiting for its next step holds none.
type prioritySem struct {
	mu      sync.Mutex
	free    int
	waiters semWaiters
	// freed, when set, is signalled (without blocking) whenever a unit
	// becomes free, so the dispatcher can start a waiting lot.
	freed chan struct{}
}

type semWaiter struct {
	n     *node
	ready chan struct{}
	index int
}

func newPrioritySem(size int) *prioritySem { return &prioritySem{free: size} }

// Acquire takes a unit for lot n, waiting behind waiters of higher
// priority; it returns ctx's error if ctx ends first. A ctx already done
// takes nothing, even when a unit is free: a lot whose wave is stopping
// starts no session.
func (s *prioritySem) Acquire(ctx context.Context, n *node) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.free > 0 && s.waiters.Len() == 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	w := &semWaiter{n: n, ready: make(chan struct{})}
	heap.Push(&s.waiters, w)
	s.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-w.ready:
			// Granted meanwhile: pass the unit on.
			s.releaseLocked()
		default:
			heap.Remove(&s.waiters, w.index)
		}
		return ctx.Err()
	}
}

// canTake reports whether a unit is free with nobody waiting for it.
func (s *prioritySem) canTake() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.free > 0 && s.waiters.Len() == 0
}

// tryTake takes a free unit if nobody waits for one.
func (s *prioritySem) tryTake() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free > 0 && s.waiters.Len() == 0 {
		s.free--
		return true
	}
	return false
}

// Release gives a unit back, to the waiter of highest priority if any.
func (s *prioritySem) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *prioritySem) releaseLocked() {
	if s.waiters.Len() == 0 {
		s.free++
		if s.freed != nil {
			select {
			case s.freed <- struct{}{}:
			default:
			}
		}
		return
	}
	w := heap.Pop(&s.waiters).(*semWaiter)
	close(w.ready)
}

type semWaiters []*semWaiter

func (h semWaiters) Len() int           { return len(h) }
func (h semWaiters) Less(i, j int) bool { return before(h[i].n, h[j].n) }
func (h semWaiters) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *semWaiters) Push(x any) {
	w := x.(*semWaiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *semWaiters) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}
