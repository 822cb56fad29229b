// Package boundedlog bounds a child process's captured output: a Writer
// passes the first half of its limit through to its destination (the head),
// keeps the last half in memory (the tail), and drops what lies between;
// Close writes one line saying how many bytes were dropped, then the tail.
// What reaches the destination is at most the limit plus that one line, so
// a step that prints without end (`yes`) costs the disk its limit, never
// more.
//
// A Writer never blocks or fails its caller: Write always reports the whole
// of p written, so the process's pipe keeps being drained whatever the
// limit or the disk does. The first error of the destination (a full disk)
// is kept (Err), reported once to OnError, and nothing is written to the
// destination after it: space that another process frees later is never
// taken back. The package imports nothing of cadence's.
package boundedlog

import (
	"fmt"
	"io"
	"sync"
)

// MinLimit is the smallest limit a Writer keeps: a head and a tail of half
// a KiB each.
const MinLimit = 1 << 10

// Writer is a bounded writer; make one with New. It is safe for concurrent
// use (a step's stdout and stderr may share it).
type Writer struct {
	mu      sync.Mutex
	dst     io.Writer
	onError func(error)
	head    int64 // bytes passed through before the tail starts
	tailCap int
	written int64  // bytes written to dst
	total   int64  // bytes given to Write
	ring    []byte // the tail: the last tailCap bytes past the head
	start   int    // ring's oldest byte once it is full
	err     error
	closed  bool
	cut     int64 // bytes dropped, fixed at Close
}

// New returns a Writer to dst that keeps limit bytes (at least MinLimit):
// limit/2 of head, the rest of tail. onError, when not nil, is called once,
// from the writing goroutine, with the destination's first error.
func New(dst io.Writer, limit int64, onError func(error)) *Writer {
	limit = max(limit, MinLimit)
	return &Writer{dst: dst, onError: onError, head: limit / 2, tailCap: int(limit - limit/2)}
}

// Write passes p through while the head has room and keeps the rest in the
// tail. It always returns len(p), nil.
func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	w.total += int64(n)
	if w.err != nil || w.closed {
		w.mu.Unlock()
		return n, nil
	}
	if room := w.head - w.written; room > 0 {
		k := int(min(room, int64(len(p))))
		if err := w.writeLocked(p[:k]); err != nil {
			w.mu.Unlock()
			w.report(err)
			return n, nil
		}
		p = p[k:]
	}
	w.keepLocked(p)
	w.mu.Unlock()
	return n, nil
}

// keepLocked appends p to the tail ring, keeping its last tailCap bytes.
func (w *Writer) keepLocked(p []byte) {
	if len(p) >= w.tailCap {
		w.ring = append(w.ring[:0], p[len(p)-w.tailCap:]...)
		w.start = 0
		return
	}
	if len(w.ring) < w.tailCap {
		room := w.tailCap - len(w.ring)
		k := min(room, len(p))
		w.ring = append(w.ring, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(w.ring[w.start:], p)
		p = p[k:]
		w.start = (w.start + k) % w.tailCap
	}
}

// tailLocked returns the tail in order.
func (w *Writer) tailLocked() []byte {
	if w.start == 0 {
		return w.ring
	}
	return append(append([]byte{}, w.ring[w.start:]...), w.ring[:w.start]...)
}

func (w *Writer) writeLocked(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	k, err := w.dst.Write(p)
	w.written += int64(k)
	if err == nil && k < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
	}
	return err
}

func (w *Writer) report(err error) {
	if w.onError != nil {
		w.onError(err)
	}
}

// Close writes the dropped-bytes line, when bytes were dropped, and the
// tail to the destination; it does not close the destination. Writes after
// Close are counted and dropped. It returns the destination's first error
// (Err), and is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed || w.err != nil {
		w.closed = true
		err := w.err
		w.mu.Unlock()
		return err
	}
	w.closed = true
	var out []byte
	if w.cut = w.total - w.written - int64(len(w.ring)); w.cut > 0 {
		out = append(out, Marker(w.cut)...)
	}
	out = append(out, w.tailLocked()...)
	err := w.writeLocked(out)
	w.ring = nil
	w.mu.Unlock()
	if err != nil {
		w.report(err)
	}
	return err
}

// Marker is the line written in place of dropped bytes. It begins with a
// newline of its own, so that it stands on its own line even when the
// head ends mid-line.
func Marker(dropped int64) string {
	return fmt.Sprintf("\n[… cadence dropped %d bytes of output here (log_limit) …]\n", dropped)
}

// Dropped is the number of bytes the limit kept from the destination:
// those between the head and the tail (so far, before Close). Bytes lost
// to a destination error are not counted.
func (w *Writer) Dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.err != nil:
		return 0
	case w.closed:
		return w.cut
	}
	return max(0, w.total-w.written-int64(len(w.ring)))
}

// Total is the number of bytes given to Write.
func (w *Writer) Total() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// Err is the destination's first error, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
