// The handoff: the fast path that tries every slot, and the queue of
// waiting Acquires served by one blocked flock(2) per slot (see the package
// documentation).

package slots

import (
	"context"
	"fmt"
	"slices"
)

// tryAll is the fast path: try every slot without blocking, unless others
// are already queued (they come first).
func (p *Pool) tryAll() (*Slot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if len(p.waiters) > 0 {
		return nil, nil
	}
	for i := p.size - 1; i >= 0; i-- {
		if p.busy[i] {
			continue
		}
		p.busy[i] = true
		p.mu.Unlock()
		fl, err := openLock(slotPath(p.dir, i))
		ok := false
		if err == nil {
			ok, err = fl.tryLock()
		}
		p.mu.Lock()
		if ok && !p.closed {
			return p.newSlot(i, fl), nil
		}
		if fl != nil {
			_ = fl.close()
		}
		p.busy[i] = false
		p.cond.Broadcast()
		if err != nil {
			return nil, fmt.Errorf("slots: lock %s: %w", slotPath(p.dir, i), err)
		}
		if p.closed {
			return nil, ErrClosed
		}
	}
	return nil, nil
}

// wait queues the caller until a grabber hands it a slot.
func (p *Pool) wait(ctx context.Context) (*Slot, error) {
	w := &waiter{ch: make(chan result, 1)}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.waiters = append(p.waiters, w)
	p.cond.Broadcast()
	p.mu.Unlock()

	select {
	case r := <-w.ch:
		return r.slot, r.err
	case <-ctx.Done():
		p.mu.Lock()
		if i := slices.Index(p.waiters, w); i >= 0 {
			p.waiters = slices.Delete(p.waiters, i, i+1)
			p.mu.Unlock()
			return nil, ctx.Err()
		}
		p.mu.Unlock()
		// A result was sent before we could leave the queue.
		if r := <-w.ch; r.slot != nil {
			_ = r.slot.Release()
		}
		return nil, ctx.Err()
	}
}

// grabber runs for the pool's life. While Acquires are queued and slot i is
// not busy, it blocks in flock(2) on slot i and hands the slot to the first
// waiter, or gives it back at once when nobody waits any more.
func (p *Pool) grabber(i int) {
	path := slotPath(p.dir, i)
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		for !p.closed && (len(p.waiters) == 0 || p.busy[i]) {
			p.cond.Wait()
		}
		if p.closed {
			return
		}
		p.busy[i] = true
		p.mu.Unlock()
		fl, err := openLock(path)
		if err == nil {
			if err = fl.lock(); err != nil {
				_ = fl.close()
			}
		}
		p.mu.Lock()
		if err == nil && !p.closed && len(p.waiters) > 0 {
			w := p.waiters[0]
			p.waiters = p.waiters[1:]
			w.ch <- result{slot: p.newSlot(i, fl)}
			continue
		}
		if err == nil {
			_ = fl.close()
		}
		p.busy[i] = false
		if err != nil && len(p.waiters) > 0 {
			w := p.waiters[0]
			p.waiters = p.waiters[1:]
			w.ch <- result{err: fmt.Errorf("slots: lock %s: %w", path, err)}
		}
	}
}

// newSlot records slot i as held; p.mu must be held.
func (p *Pool) newSlot(i int, fl *fileLock) *Slot {
	s := &Slot{pool: p, index: i, fl: fl}
	p.held[i] = s
	return s
}
