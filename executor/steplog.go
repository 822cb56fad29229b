package executor

import (
	"fmt"
	"io"
	"os"

	"github.com/cadence-run/cadence/internal/boundedlog"
	"github.com/cadence-run/cadence/internal/diskspace"
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

// newStepLog makes the log of a step of lr at path; failed, when not nil,
// is called once with the first write error.
func newStepLog(lr *lotRun, path string, failed func(error)) *stepLog {
	f := &lazyFile{lr: lr, path: path}
	return &stepLog{path: path, tail: &tailBuffer{max: 4096}, file: f,
		b: boundedlog.New(f, int64(lr.n.lot.LogLimit), failed)}
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

// lazyFile is a file made, with the lot's log folder, on its first write.
type lazyFile struct {
	lr   *lotRun
	path string
	f    *os.File
}

var _ io.Writer = (*lazyFile)(nil)

func (l *lazyFile) Write(p []byte) (int, error) {
	if l.f == nil {
		if err := l.lr.ensureLogDir(); err != nil {
			return 0, err
		}
		f, err := os.Create(l.path)
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
