package codex

import (
	"io"
	"os"
	"sync"

	"github.com/cadence-run/cadence/internal/boundedlog"
	"github.com/cadence-run/cadence/spec"
)

// files are what one run of the CLI leaves: <prefix>.json, its JSONL
// stdout, and <prefix>.err, its stderr, each bounded by the session's
// LogLimit (boundedlog: head, one line saying what was dropped, tail).
// The first failed write (a full disk) calls stop, which ends the run,
// and nothing more is written to either.
type files struct {
	out, err   *os.File
	outB, errB *boundedlog.Writer

	mu     sync.Mutex
	failed error
}

// openFiles creates the files of prefix, bounded by limit bytes each (0:
// spec.DefaultLogLimit).
func openFiles(prefix string, limit int64, stop func()) (*files, error) {
	if limit <= 0 {
		limit = int64(spec.DefaultLogLimit)
	}
	f := &files{}
	var err error
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
	f.outB = boundedlog.New(&guarded{f: f, w: f.out}, limit, fail)
	f.errB = boundedlog.New(&guarded{f: f, w: f.err}, limit, fail)
	return f, nil
}

// guarded writes to w until either file failed.
type guarded struct {
	f *files
	w io.Writer
}

func (g *guarded) Write(p []byte) (int, error) {
	g.f.mu.Lock()
	failed := g.f.failed
	g.f.mu.Unlock()
	if failed != nil {
		return 0, failed
	}
	return g.w.Write(p)
}

func (f *files) stdout() io.Writer { return f.outB }
func (f *files) stderr() io.Writer { return f.errB }

// close writes what the limits kept of the ends, closes the files and
// returns the first write error (an *fs.PathError naming the file).
func (f *files) close() error {
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

// cut is the number of bytes the limits dropped from both files.
func (f *files) cut() int64 { return f.outB.Dropped() + f.errB.Dropped() }

// errTail reads the stderr file back, at most its limit.
func errTail(prefix string, limit int64) string {
	if limit <= 0 {
		limit = int64(spec.DefaultLogLimit)
	}
	fh, err := os.Open(prefix + ".err")
	if err != nil {
		return ""
	}
	defer fh.Close()
	b, _ := io.ReadAll(io.LimitReader(fh, limit+1024))
	return string(b)
}
