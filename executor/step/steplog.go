package step

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/cadence-run/cadence/internal/boundedlog"
	"github.com/cadence-run/cadence/internal/diskspace"
	"github.com/cadence-run/cadence/spec"
)

// stepLog is a step's captured output (a command's, a test gate's, a
// setup's): the file at path, bounded by the lot's log_limit
// (boundedlog: the head and the tail around one line saying what was
// dropped), made on the first write; the last lines are kept in tail for
// the console whatever the limit. A failed write of the file calls
// failed once (from the writing goroutine) and nothing more is written;
// the pipe is drained all the same.
type stepLog struct {
	path string
	tail *tailBuffer
	file *lazyFile
	b    *boundedlog.Writer
}

// newStepLog makes a step's log at path, bounded by limit bytes (0:
// spec.DefaultLogLimit); failed, when not nil, is called once with the
// first write error.
func newStepLog(path string, limit spec.Bytes, failed func(error)) *stepLog {
	f := &lazyFile{path: path}
	return &stepLog{path: path, tail: &tailBuffer{max: 4096}, file: f,
		b: boundedlog.New(f, int64(limit), failed)}
}

func (l *stepLog) Write(p []byte) (int, error) {
	_, _ = l.tail.Write(p)
	return l.b.Write(p)
}

// Close writes what the limit kept of the end and closes the file; it
// returns the first write error (Err). It is idempotent.
func (l *stepLog) Close() error {
	err := l.b.Close()
	if cerr := l.file.close(); err == nil {
		err = cerr
	}
	return err
}

// Err is the first error writing the file, or nil.
func (l *stepLog) Err() error { return l.b.Err() }

// Cut is the number of bytes the limit dropped (after Close: all of them).
func (l *stepLog) Cut() int64 { return l.b.Dropped() }

// cutNote says what the limit dropped, for a step's cause: "output cut:
// 1.2 GiB dropped (log_limit 64KiB)"; "" when nothing was.
func cutNote(cut int64, limit fmt.Stringer) string {
	if cut <= 0 {
		return ""
	}
	return fmt.Sprintf("output cut: %s dropped (log_limit %s)", diskspace.Bytes(uint64(cut)), limit)
}

// cutSuffix is cutNote after "; ", or "".
func cutSuffix(cut int64, limit fmt.Stringer) string {
	if n := cutNote(cut, limit); n != "" {
		return "; " + n
	}
	return ""
}

// lazyFile is a file made, with its folder (the lot's log folder), on its
// first write.
type lazyFile struct {
	path string
	f    *os.File
}

var _ io.Writer = (*lazyFile)(nil)

func (l *lazyFile) Write(p []byte) (int, error) {
	if l.f == nil {
		if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
			return 0, err
		}
		// The lead's alone, as the state (docs/running.md, State and resume).
		f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(p)
}

func (l *lazyFile) close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

// String returns the last lines kept (at most 20).
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimRight(t.buf, "\n"), []byte("\n"))
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// WriteFailure describes a failed write of path: "disk full: <path>:
// <error> (<free> free on <mount>)" for a full disk or quota
// (diskspace.FullError), else "cannot write <path>: <error>".
func WriteFailure(err error, path string) string {
	if fe := diskspace.Full(err, path); fe != nil {
		return fe.Error()
	}
	return fmt.Sprintf("cannot write %s: %v", path, err)
}
