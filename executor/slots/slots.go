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
// last process holding the file exits or is killed (cadence, and the
// session's supervisor, see [Slot.File]), so a dead session's slot is free
// at once; there are no pid files to go stale.
//
// A [Pool] of size n uses slot-0 … slot-(n-1). Processes with different
// caps share the low slots: with pools of size 2 and 3 on one machine, the
// first can hold only slot-0 and slot-1, the second any of slot-0 … slot-2.
// So each process never holds more sessions than its own cap, and the
// machine-wide total never exceeds the largest cap among live processes.
// A pool tries its highest slot first, leaving the low slots, the only ones
// smaller-cap pools can use, to them while it can.
//
// # Holds
//
// A hold ([TakeHold], `cadence hold`) reserves one slot of every pool for a
// session cadence does not run (the lead's own). Holds live in the file
// holds.json of the slot directory, written atomically under an exclusive
// flock of holds.lock, so no process has to stay alive to keep one; a hold
// ends when released ([ReleaseHold]) or when it expires. With h live holds
// a pool of size n uses only slot-h … slot-(n-1) and holds at most n-h of
// them, so the machine-wide total stays at most the largest cap minus h.
// A pool reads the holds (under a shared flock of holds.lock) before every
// fast-path try and after a grabber wins a slot; it holds off a slot the
// holds now reserve. A hold limits the sessions that start after it: one
// already running in a slot it reserves finishes. A pool whose cap is not
// above the live holds starts nothing: its Acquires wait until a hold
// expires or is released. While Acquires wait and holds are live, the pool
// reads the holds again every second (the only polling: a release is a
// write to a file, which no blocked flock sees).
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
// # Identity
//
// A slot is its file, not its name. Every holder also keeps a shared flock
// on the slot folder for as long as it holds a slot, and takes a slot only
// when, after locking, its path still names the file it locked (dev and
// inode; else it opens it again). A slot file that is missing (deleted
// while a session held it: the session's lock lives on with the unlinked
// file) is made again only under the folder's exclusive flock, which no
// holder's shared lock allows: so a deleted slot is not handed out again
// until every session of the folder ended, and the cap holds. A goroutine
// that needs a missing file tries that lock without blocking, again every
// poll (a second) while the file is missing: one blocked in flock(2) for it
// would wait on its own pool's shared lock once a sibling made the file
// again and took its slot. A session
// whose cadence died keeps only its slot file ([Slot.File]), not the
// folder's lock.
//
// flock locks belong to open file descriptions: two Pools in one process
// exclude each other exactly like two processes. Slot files are opened
// close-on-exec, so agent processes started by cadence do not inherit them;
// the one exception is the session's supervisor, handed the held slot's
// file on purpose ([Slot.File]): it holds the slot until the last process
// of the session is gone, even when cadence dies first, and only then does
// the kernel drop the lock.
//
// # Live waves
//
// [Register] records a running wave as waves/<pid>.json and keeps a flock on
// waves/<pid>.lock for as long as the process lives; that lock, not the
// pid, proves the entry live. [Live] lists the entries whose lock is held
// and removes the others.
package slots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
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
	// watching is watchHolds, which Close waits for: it reads the holds
	// file (under its lock file), and must not do so after Close.
	watching sync.WaitGroup
	// grabbing is the grabbers; Close does not wait for them (one may be
	// blocked in flock(2)): each exits once it has the lock and gave it back.
	grabbing sync.WaitGroup

	mu      sync.Mutex
	cond    sync.Cond // signals changes of waiters, busy and closed
	waiters []*waiter // queued Acquires, first come first served
	busy    []bool    // slot i is held by this pool or being locked by it
	held    []*Slot   // slot i as held by this pool
	closed  bool

	// reserved is the number of live holds (see holds.go), at most size,
	// as last read: the pool uses only slot-reserved … slot-(size-1), and
	// holds at most size-reserved of them.
	reserved int
	holds    holdsCache       // the holds last read (holdscache.go)
	now      func() time.Time // the clock holds expire by
	poll     time.Duration    // how often waiters look at the holds again
	done     chan struct{}    // closed by Close
	// remakeWait, when set (tests), is called each time a goroutine of
	// the pool finds slot i missing and waits p.poll for it to be made.
	remakeWait func(i int)
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
	fl    *flock.File // the slot file, locked exclusively
	dirl  *flock.File // the slot folder, locked shared while the slot is held

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
	return open(dir, size, time.Now, time.Second)
}

// open is Open with the clock holds expire by and the interval at which a
// pool with queued Acquires and live holds reads the holds again.
func open(dir string, size int, now func() time.Time, poll time.Duration) (*Pool, error) {
	if size < 1 {
		return nil, fmt.Errorf("slots: pool size %d: must be at least 1", size)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("slots: %w", err)
	}
	// Create the files up front so Inspect shows free slots too; a missing
	// file is made only under the folder's lock (identity.go): while others
	// hold slots it is left to the Acquire that needs it.
	for i := range size {
		if _, err := os.Stat(slotPath(dir, i)); errors.Is(err, os.ErrNotExist) {
			if _, err := recreate(dir, i); err != nil {
				return nil, fmt.Errorf("slots: %w", err)
			}
		}
	}
	p := &Pool{dir: dir, size: size, busy: make([]bool, size), held: make([]*Slot, size), now: now, poll: poll, done: make(chan struct{})}
	p.cond.L = &p.mu
	p.refresh()
	for i := range size {
		p.grabbing.Go(func() { p.grabber(i) })
	}
	p.watching.Add(1)
	go func() {
		defer p.watching.Done()
		p.watchHolds()
	}()
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
	close(p.done)
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
	p.watching.Wait()

	for _, w := range waiters {
		w.ch <- result{err: ErrClosed}
	}
	var errs []error
	for _, s := range held {
		errs = append(errs, s.Release())
	}
	return errors.Join(errs...)
}
