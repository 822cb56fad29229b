// The handoff: the fast path that tries every slot, and the queue of
// waiting Acquires served by one blocked flock(2) per slot (see the package
// documentation).

package slots

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
)

// tryAll is the fast path: try every slot without blocking, unless others
// are already queued (they come first).
func (p *Pool) tryAll() (*Slot, error) {
	p.refresh()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if len(p.waiters) > 0 {
		return nil, nil
	}
	for i := p.size - 1; i >= 0; i-- {
		if p.busy[i] || !p.allowed(i) {
			continue
		}
		p.busy[i] = true
		p.mu.Unlock()
		fl, dirl, ok, err := p.take(i, false)
		p.mu.Lock()
		if ok && !p.closed && p.allowed(i) {
			return p.newSlot(i, fl, dirl), nil
		}
		if ok {
			_ = dirl.Close()
			_ = fl.Close()
		}
		p.busy[i] = false
		p.cond.Broadcast()
		if err != nil {
			return nil, fmt.Errorf("slots: %w", err)
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
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		for !p.closed && (len(p.waiters) == 0 || p.busy[i] || !p.allowed(i)) {
			p.cond.Wait()
		}
		if p.closed {
			return
		}
		p.busy[i] = true
		p.mu.Unlock()
		fl, dirl, _, err := p.take(i, true)
		if err == nil {
			p.refresh() // a hold may have come while we blocked
		}
		p.mu.Lock()
		if err == nil && !p.closed && len(p.waiters) > 0 && p.allowed(i) {
			w := p.waiters[0]
			p.waiters = p.waiters[1:]
			w.ch <- result{slot: p.newSlot(i, fl, dirl)}
			continue
		}
		if err == nil {
			_ = dirl.Close()
			_ = fl.Close()
		}
		p.busy[i] = false
		if err != nil && len(p.waiters) > 0 {
			w := p.waiters[0]
			p.waiters = p.waiters[1:]
			w.ch <- result{err: fmt.Errorf("slots: %w", err)}
		}
	}
}

// allowed reports whether the pool may take slot i now: live holds keep
// the pool off the low slots slot-0 … slot-(reserved-1), and to at most
// size-reserved slots of its own (a hold taken while the pool held more
// lets those sessions finish). p.mu must be held.
func (p *Pool) allowed(i int) bool {
	if i < p.reserved {
		return false
	}
	held := 0
	for _, s := range p.held {
		if s != nil {
			held++
		}
	}
	return held < p.size-p.reserved
}

// refresh reads the live holds again (p.mu must not be held) and wakes the
// grabbers when their number changed. An unreadable holds file keeps the
// last number read. The holds come from the pool's cache while the holds
// file is unchanged (holdscache.go): one stat(2) per slot request.
func (p *Pool) refresh() {
	n, err := p.holds.live(p.dir, p.now())
	if err != nil {
		logHolds(p.dir, err)
		return
	}
	n = min(n, p.size)
	p.mu.Lock()
	if n != p.reserved {
		p.reserved = n
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

// watchHolds runs for the pool's life: while Acquires are queued and holds
// keep slots from them, it reads the holds again every p.poll, so that a
// hold released (cadence release, from any process) or expired frees its
// slot for them. Without holds it does nothing: the handoff itself does not
// poll.
func (p *Pool) watchHolds() {
	p.mu.Lock()
	for {
		for !p.closed && (len(p.waiters) == 0 || p.reserved == 0) {
			p.cond.Wait()
		}
		if p.closed {
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		select {
		case <-p.done:
			return
		case <-time.After(p.poll):
		}
		p.refresh()
		p.mu.Lock()
	}
}

// newSlot records slot i as held; p.mu must be held.
func (p *Pool) newSlot(i int, fl, dirl *flock.File) *Slot {
	s := &Slot{pool: p, index: i, fl: fl, dirl: dirl}
	p.held[i] = s
	return s
}
