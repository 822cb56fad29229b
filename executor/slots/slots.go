// Package slots caps the number of simultaneous agent sessions on a machine,
// across every cadence process, and keeps the registry of live waves that
// `cadence status` shows.
//
// # Slots
//
// A slot directory (the caller passes $CADENCE_HOME/slots) holds files
// slot-0, slot-1, ... An agent session holds an exclusive flock(2) on one
// slot file for its duration and writes a JSON [Holder] into it, so
// [Inspect] can tell who holds what. The kernel drops the lock when the
// process exits or is killed, so a dead process's slots are free at once;
// there are no pid files to go stale.
//
// A [Pool] of size n uses slot-0 … slot-(n-1). Processes with different
// caps share the low slots: with pools of size 2 and 3 on one machine, the
// first can hold only slot-0 and slot-1, the second any of slot-0 … slot-2.
// So each process never holds more sessions than its own cap, and the
// machine-wide total never exceeds the largest cap among live processes.
// A pool tries its highest slot first, leaving the low slots, the only ones
// smaller-cap pools can use, to them while it can.
//
// Handoff does not poll. Acquire first tries every slot without blocking
// (unless Acquires of the same pool are already queued: they come first).
// Otherwise it queues; while a pool has queued Acquires, one goroutine per
// slot file (not held by the pool itself) sits in a blocking flock(2) on
// it. The moment another process frees a slot, the kernel wakes that
// goroutine, which hands the slot to the first queued Acquire; if the queue
// has emptied meanwhile (an Acquire's ctx ended) it unlocks at once. Each
// such goroutine occupies an OS thread while it blocks. The kernel does not
// queue flock waiters fairly: under heavy contention one process may win
// more often than another.
//
// flock locks belong to open file descriptions: two Pools in one process
// exclude each other exactly like two processes. Slot files are opened
// close-on-exec, so agent processes started by cadence do not inherit them.
//
// # Live waves
//
// [Register] records a running wave as waves/<pid>.json and keeps a flock on
// waves/<pid>.lock for as long as the process lives; that lock, not the
// pid, proves the entry live. [Live] lists the entries whose lock is held
// and removes the others.
package slots

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
	gofrs "github.com/gofrs/flock"
)

// ErrClosed is returned by Acquire on a closed Pool, and to Acquires still
// waiting when the Pool is closed.
var ErrClosed = errors.New("slots: pool closed")

// Holder says who holds a slot; it is written as JSON into the slot file.
type Holder struct {
	// PID is the holding process; Acquire fills in the caller's pid when
	// it is zero.
	PID int `json:"pid"`
	// Wave is the wave the session belongs to.
	Wave string `json:"wave"`
	// Lot is the lot the session works on.
	Lot string `json:"lot,omitempty"`
	// Step is the lot's step (e.g. "work", "review").
	Step string `json:"step,omitempty"`
	// Since is when the slot was taken; Acquire fills in the current
	// time when it is zero.
	Since time.Time `json:"since"`
}

// Pool hands out the slots slot-0 … slot-(size-1) of one directory. It is
// safe for concurrent use.
type Pool struct {
	dir  string
	size int

	mu      sync.Mutex
	cond    sync.Cond // signals changes of waiters, busy and closed
	waiters []*waiter // queued Acquires, first come first served
	busy    []bool    // slot i is held by this pool or being locked by it
	held    []*Slot   // slot i as held by this pool
	closed  bool
}

type waiter struct {
	ch chan result // buffered: receives exactly one result
}

type result struct {
	slot *Slot
	err  error
}

// Slot is one held slot. Release it when the session ends.
type Slot struct {
	pool  *Pool
	index int
	fl    *gofrs.Flock

	mu       sync.Mutex
	released bool
}

// SlotInfo is what Inspect reports about one slot file.
type SlotInfo struct {
	// Index is n of slot-n.
	Index int
	// Held is whether some process holds the slot now.
	Held bool
	// Holder is what the holder wrote into the file; nil when the slot
	// is free or the holder could not be read.
	Holder *Holder
}

// Open creates dir and the files of a pool of size slots in it and starts
// the pool's background goroutines. Close the pool when done.
func Open(dir string, size int) (*Pool, error) {
	if size < 1 {
		return nil, fmt.Errorf("slots: pool size %d: must be at least 1", size)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("slots: %w", err)
	}
	// Create the files up front so Inspect shows free slots too.
	for i := range size {
		f, err := os.OpenFile(slotPath(dir, i), os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("slots: %w", err)
		}
		f.Close()
	}
	p := &Pool{dir: dir, size: size, busy: make([]bool, size), held: make([]*Slot, size)}
	p.cond.L = &p.mu
	for i := range size {
		go p.grabber(i)
	}
	return p, nil
}

// Size returns the pool's cap.
func (p *Pool) Size() int { return p.size }

// Acquire returns a slot of the pool, waiting until one is free or ctx is
// done (then it returns ctx.Err()). h, with PID and Since filled in when
// zero, is written into the slot file.
func (p *Pool) Acquire(ctx context.Context, h Holder) (*Slot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if h.PID == 0 {
		h.PID = os.Getpid()
	}
	s, err := p.tryAll()
	if err != nil {
		return nil, err
	}
	if s == nil {
		start := time.Now()
		s, err = p.wait(ctx)
		logWait(p.dir, s, time.Since(start), err)
		if err != nil {
			return nil, err
		}
	}
	if h.Since.IsZero() {
		h.Since = time.Now()
	}
	data, err := json.Marshal(h)
	if err == nil {
		err = flock.WriteRecord(s.path(), append(data, '\n'))
	}
	if err != nil {
		_ = s.Release()
		return nil, fmt.Errorf("slots: write holder: %w", err)
	}
	return s, nil
}

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
		fl := gofrs.New(slotPath(p.dir, i))
		ok, err := fl.TryLock()
		p.mu.Lock()
		if ok && !p.closed {
			return p.newSlot(i, fl), nil
		}
		if ok {
			_ = fl.Unlock()
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
		fl := gofrs.New(path)
		err := lockWait(fl)
		p.mu.Lock()
		if err == nil && !p.closed && len(p.waiters) > 0 {
			w := p.waiters[0]
			p.waiters = p.waiters[1:]
			w.ch <- result{slot: p.newSlot(i, fl)}
			continue
		}
		if err == nil {
			_ = fl.Unlock()
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
func (p *Pool) newSlot(i int, fl *gofrs.Flock) *Slot {
	s := &Slot{pool: p, index: i, fl: fl}
	p.held[i] = s
	return s
}

// Close releases every slot the pool holds, fails the Acquires still
// waiting with ErrClosed and stops the background goroutines. A goroutine
// blocked in flock(2) cannot be interrupted: it exits as soon as the kernel
// gives it the lock, which it releases at once. Close is idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	waiters := p.waiters
	p.waiters = nil
	var held []*Slot
	for _, s := range p.held {
		if s != nil {
			held = append(held, s)
		}
	}
	p.cond.Broadcast()
	p.mu.Unlock()

	for _, w := range waiters {
		w.ch <- result{err: ErrClosed}
	}
	var errs []error
	for _, s := range held {
		errs = append(errs, s.Release())
	}
	return errors.Join(errs...)
}

// Index returns n of the slot file slot-n.
func (s *Slot) Index() int { return s.index }

func (s *Slot) path() string { return slotPath(s.pool.dir, s.index) }

// Release blanks the holder record in the slot file and unlocks it. Calling it again does
// nothing and returns nil.
func (s *Slot) Release() error {
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		return nil
	}
	s.released = true
	s.mu.Unlock()

	// Blank the record before unlocking, so the next holder's record is
	// never clobbered and a free slot shows no holder.
	terr := flock.WriteRecord(s.path(), nil)
	if errors.Is(terr, os.ErrNotExist) {
		terr = nil
	}
	uerr := s.fl.Unlock()

	p := s.pool
	p.mu.Lock()
	if p.held[s.index] == s {
		p.held[s.index] = nil
	}
	p.busy[s.index] = false
	p.cond.Broadcast()
	p.mu.Unlock()
	return errors.Join(terr, uerr)
}

// Inspect reports every slot file in dir (of whatever pool size), sorted by
// index, and for each whether it is held and by whom. It tests a slot with a
// non-blocking shared lock, dropped at once: that holds off a waiting
// Acquire for a few microseconds at most. A missing dir has no slots.
func Inspect(dir string) ([]SlotInfo, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("slots: %w", err)
	}
	var infos []SlotInfo
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "slot-")
		if !ok || e.IsDir() {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || strconv.Itoa(i) != n {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fl := gofrs.New(path)
		free, err := fl.TryRLock()
		if err != nil {
			return nil, fmt.Errorf("slots: inspect %s: %w", path, err)
		}
		info := SlotInfo{Index: i, Held: !free}
		if free {
			_ = fl.Unlock()
		} else {
			var h Holder
			if readJSON(path, &h) {
				info.Holder = &h
			}
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b SlotInfo) int { return a.Index - b.Index })
	return infos, nil
}

func slotPath(dir string, i int) string {
	return filepath.Join(dir, "slot-"+strconv.Itoa(i))
}

// lockWait is a blocking flock(2) that survives EINTR.
func lockWait(fl *gofrs.Flock) error {
	for {
		err := fl.Lock()
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// writeRecord overwrites the (locked) file at path with data, padded with
// spaces to the file's current size; empty data blanks the file. Writing in
// place instead of truncating matters: truncation frees blocks and costs a
// journal commit on ext4 (~0.2 ms), on the critical path of every handoff.
// The write goes through a descriptor of its own, which is fine: closing it
// does not drop the flock held through another one (flock locks belong to
// the open file description, unlike fcntl locks, which belong to the
// process and die with the first close).

// readJSON reads the record a holder wrote. A new holder writes just after
// locking, so a blank or partial record is read again a few times.
func readJSON(path string, v any) bool {
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Millisecond)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		if data = bytes.TrimSpace(data); len(data) > 0 && json.Unmarshal(data, v) == nil {
			return true
		}
	}
	return false
}
