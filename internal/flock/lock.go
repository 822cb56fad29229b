// Package flock provides named cross-process locks that say who holds them.
//
// A lock is an exclusive flock(2) (a [File]) on a file,
// for example a wave state file's "<state>.lock" or a repository's
// "<git-common-dir>/cadence/repo.lock". After taking the lock the holder
// writes a JSON [Holder] into that same file (in place, padded with
// spaces; Release blanks it), so a refused caller gets a [HeldError] naming
// the wave, pid and start time of the holder.
//
// Semantics worth knowing:
//
//   - The kernel owns the lock, not a pid file: when the holding process
//     exits or is killed (even with SIGKILL) the lock is free at once. A
//     lock file that still has content but is not locked is just a leftover
//     of a killed holder and never blocks anybody.
//   - flock locks belong to an open file description. Every [Lock] opens
//     the file anew, so a second TryAcquire of the same path in the same
//     process is refused exactly like one from another process, and a
//     second Acquire in the same process waits. Callers that want
//     re-entrance or in-process queuing must add their own mutex.
//   - Files are opened close-on-exec, so child processes (agents, git) do
//     not inherit the lock and cannot keep it alive after cadence dies.
//   - Lock files are never deleted: deleting a file that others may have
//     opened and be waiting on would let two processes "hold" two different
//     inodes under one name.
//   - flock on NFS is emulated with fcntl locks by some kernels; keep lock
//     files on a local file system.
package flock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Holder describes who holds a lock; it is written as JSON into the lock file.
type Holder struct {
	// PID is the holding process; TryAcquire and Acquire fill in the
	// caller's pid when it is zero.
	PID int `json:"pid"`
	// Wave is the name of the holder's wave.
	Wave string `json:"wave"`
	// File is the holder's wave file, if useful.
	File string `json:"file,omitempty"`
	// Since is when the lock was taken; TryAcquire and Acquire fill in
	// the current time when it is zero.
	Since time.Time `json:"since"`
	// What says what the holder is doing ("apply", "integrate lot api").
	What string `json:"what,omitempty"`
}

// Lock is a held lock. Release it when done; it is also released when the
// process exits.
type Lock struct {
	path string
	fl   *File

	mu       sync.Mutex
	released bool
}

// HeldError is returned by TryAcquire when another open file description
// (another process, or another Lock in this process) holds the lock.
type HeldError struct {
	// Path is the lock file.
	Path string
	// Holder is what the holder wrote into the lock file.
	Holder Holder
	// Unknown is set when the holder could not be read (the file was
	// empty, unreadable or being rewritten); Holder is then zero.
	Unknown bool
	// Waited is how long AcquireTimeout waited before giving up (zero
	// for a refusal without waiting).
	Waited time.Duration
}

// Error says who holds the lock, e.g.
// `wave "auth" (pid 4242, since 14:03:12) holds /x/wave.state.json.lock`.
func (e *HeldError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("%s is held by another process (holder unknown)%s", e.Path, e.waited())
	}
	h := e.Holder
	who := fmt.Sprintf("wave %q", h.Wave)
	if h.Wave == "" {
		who = "another cadence"
	}
	detail := fmt.Sprintf("pid %d, since %s", h.PID, formatSince(h.Since))
	if h.File != "" {
		detail = h.File + ", " + detail
	}
	msg := fmt.Sprintf("%s (%s) holds %s", who, detail, e.Path)
	if h.What != "" {
		msg += " (" + h.What + ")"
	}
	return msg + e.waited()
}

// waited is the note of a refusal after a wait ("" without one).
func (e *HeldError) waited() string {
	if e.Waited <= 0 {
		return ""
	}
	return fmt.Sprintf("; still held after waiting %s", e.Waited)
}

func formatSince(t time.Time) string {
	if t.IsZero() {
		return "unknown time"
	}
	t = t.Local()
	now := time.Now()
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04:05")
}

// TryAcquire takes the lock at path without waiting. It creates missing
// parent directories and the file itself. If the lock is held it returns a
// *HeldError naming the holder. On success h (with PID and Since filled in
// when zero) is written into the file.
func TryAcquire(path string, h Holder) (*Lock, error) {
	fl, err := openFile(path)
	if err != nil {
		return nil, err
	}
	ok, err := fl.TryLock()
	if err != nil {
		_ = fl.Close()
		return nil, err
	}
	if !ok {
		_ = fl.Close()
		he := heldError(path)
		logWait(path, "held", 0, "wave", he.Holder.Wave, "pid", he.Holder.PID)
		return nil, he
	}
	logWait(path, "taken", 0)
	return finish(path, fl, h)
}

// Acquire takes the lock at path, waiting as long as needed or until ctx is
// done. The wait is a blocking flock(2) in a goroutine, so the lock passes
// to the waiter as soon as the kernel frees it (no polling). When ctx ends
// first Acquire returns ctx.Err() at once; the goroutine stays in flock(2)
// until the lock becomes free, then releases it immediately and exits.
func Acquire(ctx context.Context, path string, h Holder) (*Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fl, err := openFile(path)
	if err != nil {
		return nil, err
	}
	ok, err := fl.TryLock()
	if err != nil {
		_ = fl.Close()
		return nil, err
	}
	start := time.Now()
	if !ok {
		logWait(path, "waiting", 0)
		done := make(chan error, 1)
		go func() { done <- fl.Lock() }()
		select {
		case err := <-done:
			if err != nil {
				_ = fl.Close()
				return nil, err
			}
		case <-ctx.Done():
			logWait(path, "wait abandoned", time.Since(start))
			// Nobody wants the lock any more: let the blocked flock
			// finish and give the lock straight back.
			go func() {
				<-done
				_ = fl.Close()
			}()
			return nil, ctx.Err()
		}
	}
	logWait(path, "taken", time.Since(start))
	return finish(path, fl, h)
}

// AcquireTimeout takes the lock at path, waiting up to timeout while
// another holder has it (apply -lock-timeout, as Terraform's). A timeout
// of zero or less does not wait: it is TryAcquire. When the lock is held,
// onHeld (if not nil) is called once, before the wait, with who holds it,
// so the caller can say what it waits for. The wait is Acquire's (a
// blocking flock(2), no polling). When timeout passes first, the error is
// a *HeldError naming the holder at that moment, with Waited set; when ctx
// ends first, it is ctx.Err().
func AcquireTimeout(ctx context.Context, path string, h Holder, timeout time.Duration, onHeld func(*HeldError)) (*Lock, error) {
	l, err := TryAcquire(path, h)
	var he *HeldError
	if err == nil || timeout <= 0 || !errors.As(err, &he) {
		return l, err
	}
	if onHeld != nil {
		onHeld(he)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	l, err = Acquire(wctx, path, h)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		he = heldError(path)
		he.Waited = timeout
		return nil, he
	}
	return l, err
}

// logWait logs a lock taken, found held or waited for, at debug level on
// the "flock" sub-logger of hclog.L() (which internal/cli sets).
func logWait(path, what string, waited time.Duration, kv ...any) {
	if l := hclog.L(); l.IsDebug() {
		l.Named("flock").Debug("lock "+what, append([]any{"path", path, "waited", waited}, kv...)...)
	}
}

// Path returns the lock file's path.
func (l *Lock) Path() string { return l.path }

// Release blanks the holder record, unlocks the file and closes it. The file itself
// is kept. Calling Release again does nothing and returns nil.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	// Blank the record while still holding the lock, so the file never
	// shows a holder that has gone; a new holder writes only after locking.
	werr := WriteRecord(l.path, nil)
	if errors.Is(werr, os.ErrNotExist) {
		werr = nil
	}
	uerr := l.fl.Unlock()
	return errors.Join(werr, uerr, l.fl.Close())
}

// openFile opens the lock file at path (mode 0600: its holder's details
// are the lead's alone, as the state), making its folder.
func openFile(path string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return Open(path, 0o600)
}

func finish(path string, fl *File, h Holder) (*Lock, error) {
	if h.PID == 0 {
		h.PID = os.Getpid()
	}
	if h.Since.IsZero() {
		h.Since = time.Now()
	}
	data, err := json.Marshal(h)
	if err == nil {
		err = WriteRecord(path, append(data, '\n'))
	}
	if err != nil {
		_ = fl.Close()
		return nil, fmt.Errorf("lock %s: write holder: %w", path, err)
	}
	return &Lock{path: path, fl: fl}, nil
}

// WriteRecord overwrites the (locked) file at path with data, padded with
// spaces to the file's current size; empty data blanks the file. Writing in
// place instead of truncating matters: truncation frees blocks and costs a
// journal commit on ext4 (~0.2 ms), on the critical path of every handoff.
// The write goes through a descriptor of its own, which is fine: closing it
// does not drop the flock held through another one (flock locks belong to
// the open file description, unlike fcntl locks, which belong to the
// process and die with the first close).
func WriteRecord(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil {
		if n := int(fi.Size()); len(data) < n {
			data = append(data, bytes.Repeat([]byte{' '}, n-len(data))...)
		}
		_, err = f.WriteAt(data, 0)
	}
	return errors.Join(err, f.Close())
}

// heldError reads the holder of the lock at path. A new holder writes its
// record just after locking, so an empty or partial file is read again a
// few times before the holder is declared unknown.
func heldError(path string) *HeldError {
	e := &HeldError{Path: path}
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Millisecond)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			break
		}
		var h Holder
		if data = bytes.TrimSpace(data); len(data) > 0 && json.Unmarshal(data, &h) == nil {
			e.Holder = h
			return e
		}
	}
	e.Unknown = true
	return e
}

// SetHolder rewrites the holder information of a held lock, for a holder
// that learns more about itself after taking it (the wave's name, once the
// wave file is read).
func (l *Lock) SetHolder(h Holder) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return fmt.Errorf("lock %s: already released", l.path)
	}
	if h.PID == 0 {
		h.PID = os.Getpid()
	}
	if h.Since.IsZero() {
		h.Since = time.Now()
	}
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return WriteRecord(l.path, append(data, '\n'))
}
