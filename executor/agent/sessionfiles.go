package agent

import (
	"io"
	"os"
	"sync"

	"github.com/cadence-run/cadence/internal/boundedlog"
	"github.com/cadence-run/cadence/spec"
)

// SessionFiles are the files one run of an agent CLI leaves:
// <prefix>.json, its stdout (the stream the adapter reads as it comes and
// passes on), and <prefix>.err, its stderr. Each is bounded by the session's LogLimit
// (boundedlog: the first half of the limit, one line saying how many bytes
// were dropped, the last half), so the tail always holds the stream's last
// lines, its result line among them when that line is under half the
// limit. An adapter reads the stream as it comes and never needs the
// files whole: they are for the lead (cadence logs) and for Recount.
//
// The first failed write (a full disk) calls stop, which ends the
// session, and nothing more is written to either file: space that another
// process frees is not taken back.
type SessionFiles struct {
	out, err   *os.File
	outB, errB *boundedlog.Writer

	mu     sync.Mutex
	failed error
}

// OpenSessionFiles creates the files of prefix, bounded by limit bytes
// each (0: spec.DefaultLogLimit). stop is called once, from the writing
// goroutine, on the first write error.
func OpenSessionFiles(prefix string, limit int64, stop func()) (*SessionFiles, error) {
	if limit <= 0 {
		limit = int64(spec.DefaultLogLimit)
	}
	f := &SessionFiles{}
	var err error
	// The lead's alone, as the state (docs/running.md, State and resume).
	if f.out, err = os.OpenFile(prefix+".json", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err != nil {
		return nil, err
	}
	if f.err, err = os.OpenFile(prefix+".err", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err != nil {
		f.out.Close()
		return nil, err
	}
	fail := func(err error) {
		f.mu.Lock()
		first := f.failed == nil
		if first {
			f.failed = err
		}
		f.mu.Unlock()
		if first {
			stop()
		}
	}
	f.outB = boundedlog.New(&stopOnError{f: f, w: f.out}, limit, fail)
	f.errB = boundedlog.New(&stopOnError{f: f, w: f.err}, limit, fail)
	return f, nil
}

// stopOnError writes to w until either file failed: after the first error
// of one, the other is not written either.
type stopOnError struct {
	f *SessionFiles
	w io.Writer
}

func (s *stopOnError) Write(p []byte) (int, error) {
	s.f.mu.Lock()
	failed := s.f.failed
	s.f.mu.Unlock()
	if failed != nil {
		return 0, failed
	}
	return s.w.Write(p)
}

// Stdout and Stderr are the writers of the CLI's outputs.
func (f *SessionFiles) Stdout() io.Writer { return f.outB }
func (f *SessionFiles) Stderr() io.Writer { return f.errB }

// Close writes what the limits kept of the ends and closes the files. It
// returns the first write error (an *fs.PathError naming the file), and
// is called once, after the CLI's outputs are drained.
func (f *SessionFiles) Close() error {
	f.outB.Close()
	f.errB.Close()
	for _, file := range []*os.File{f.out, f.err} {
		if err := file.Close(); err != nil {
			f.mu.Lock()
			if f.failed == nil {
				f.failed = err
			}
			f.mu.Unlock()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// Cut is the number of bytes the limits dropped from both files.
func (f *SessionFiles) Cut() int64 { return f.outB.Dropped() + f.errB.Dropped() }

// ErrTail reads the stderr file of prefix back, at most its limit (the file may be
// anything its path leads to).
func ErrTail(prefix string, limit int64) []byte {
	if limit <= 0 {
		limit = int64(spec.DefaultLogLimit)
	}
	f, err := os.Open(prefix + ".err")
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, limit+1024))
	return b
}
