package box

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// StatusFD is the file descriptor a box's command line (Spec.Status) has
// bwrap write its JSON status to: the first of the process's extra files.
const StatusFD = 3

// statusCap bounds what is read of bwrap's status: two small JSON
// documents (the child's pid and namespaces, then its exit code).
const statusCap = 64 << 10

// statusWait bounds the wait for the status pipe's end after the box is
// gone (every writer of it is then gone too: bwrap, and the supervisor
// closes its copy once the box runs); it guards against a writer that
// kept it, never expected.
const statusWait = 10 * time.Second

// Status is the pipe bwrap writes its JSON status to (--json-status-fd):
// bwrap writes {"exit-code": N} only once it set the box up and ran the
// command, never when its own setup failed (a bind whose source went
// away between its check and the mount). The command does not get the
// pipe: bwrap closes it in the box.
type Status struct {
	r, w *os.File
}

// NewStatus makes the pipe. Pass Writer as the box's first extra file
// (StatusFD), then call Started once the box has ended.
func NewStatus() (*Status, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("box status pipe: %w", err)
	}
	return &Status{r: r, w: w}, nil
}

// Writer is the pipe's end for bwrap.
func (s *Status) Writer() *os.File { return s.w }

// Started closes the pipe and reports whether bwrap ran the command
// (it wrote an exit code): false means the box's own setup failed and
// the command never ran. Call it once the box has ended.
func (s *Status) Started() bool {
	s.w.Close()
	defer s.r.Close()
	_ = s.r.SetReadDeadline(time.Now().Add(statusWait))
	data, _ := io.ReadAll(io.LimitReader(s.r, statusCap))
	return started(data)
}

// Close closes both ends (for a box that was never run).
func (s *Status) Close() {
	s.w.Close()
	s.r.Close()
}

// started reports whether data, bwrap's JSON status documents one after
// the other, holds an exit code.
func started(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			return false // io.EOF, or a document cut short
		}
		if _, ok := doc["exit-code"]; ok {
			return true
		}
	}
}

// ErrNotStarted says a box's setup failed: its command never ran.
var ErrNotStarted = errors.New("the step's sandbox (bwrap) did not start")
