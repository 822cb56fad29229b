package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// serviceTailBytes bounds the output a Service keeps for its NotReadyError:
// the last bytes it wrote, cut at a line start; the full output goes to the
// caller's Stdout and Stderr, bounded there by the caller (the step log).
const serviceTailBytes = 4 << 10

// Ready says when a service answers: Answers(ctx, URL) is true (for an
// HTTP application: internal/httpready.Answers) before Timeout has passed
// since WaitReady began; a nil Answers never answers. Interval is the
// pause between polls (200 ms if zero). The check is the caller's, so
// that this package links no network code (the step supervisor is built
// from it).
type Ready struct {
	URL      string
	Answers  func(ctx context.Context, url string) bool
	Timeout  time.Duration
	Interval time.Duration
}

// NotReadyError says why a service did not become ready: it exited first
// (Exited, with how: Result) or did not answer within the timeout; Output
// is the last of what it wrote (at most serviceTailBytes).
type NotReadyError struct {
	URL     string
	Timeout time.Duration
	Exited  bool
	Result  Result
	// Err is the error of Run when the process could not start.
	Err    error
	Output string
}

func (e *NotReadyError) Error() string {
	var b strings.Builder
	switch {
	case e.Err != nil:
		fmt.Fprintf(&b, "it could not be started: %v", e.Err)
	case e.Exited && e.Result.Signal != 0:
		fmt.Fprintf(&b, "it exited (killed by signal %s) before it answered at %s", e.Result.Signal, e.URL)
	case e.Exited:
		fmt.Fprintf(&b, "it exited (exit %d) before it answered at %s", e.Result.ExitCode, e.URL)
	default:
		fmt.Fprintf(&b, "it did not answer at %s within %s", e.URL, e.Timeout)
	}
	if out := strings.TrimSpace(e.Output); out != "" {
		fmt.Fprintf(&b, " (last output: %s)", out)
	} else {
		b.WriteString(" (no output)")
	}
	return b.String()
}

// Service is a long-lived process run by Run (under the supervisor when
// the Cmd names one, so that its whole tree dies with Stop, and with
// cadence if cadence dies first): an application a step looks at.
type Service struct {
	ready  Ready
	cancel context.CancelFunc
	done   chan struct{}
	res    Result
	err    error
	tail   *tailWriter
	once   sync.Once
}

// StartService starts c as a service whose readiness is r. Its life is
// bound to ctx and ends at Stop; c.Stdout and c.Stderr still get all of
// its output, and the service keeps the last of it for its errors.
func StartService(ctx context.Context, c Cmd, r Ready) *Service {
	if r.Interval <= 0 {
		r.Interval = 200 * time.Millisecond
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &Service{ready: r, cancel: cancel, done: make(chan struct{}), tail: &tailWriter{max: serviceTailBytes}}
	sameOut := same(c.Stderr, c.Stdout)
	c.Stdout = teeTo(c.Stdout, s.tail)
	if c.Stderr == nil || sameOut {
		c.Stderr = c.Stdout
	} else {
		c.Stderr = teeTo(c.Stderr, s.tail)
	}
	go func() {
		defer close(s.done)
		s.res, s.err = Run(sctx, c)
	}()
	return s
}

// WaitReady polls the service's URL until it answers (nil), the process
// exits first, the timeout passes, or ctx ends (a *NotReadyError, or
// ctx's error).
func (s *Service) WaitReady(ctx context.Context) error {
	exited, err := poll(ctx, s.ready, s.done)
	switch {
	case errors.Is(err, errNoAnswer):
		return s.notReady(false)
	case err != nil:
		return err
	case exited:
		return s.notReady(true)
	}
	select {
	case <-s.done: // it answered, but it is gone: another server answered
		return s.notReady(true)
	default:
	}
	return nil
}

// errNoAnswer is poll's error when the timeout passed.
var errNoAnswer = errors.New("no answer")

// WaitAnswer polls r.URL, an application cadence did not start, until it
// answers (nil), r.Timeout passes (a *NotReadyError) or ctx ends (ctx's
// error).
func WaitAnswer(ctx context.Context, r Ready) error {
	if r.Interval <= 0 {
		r.Interval = 200 * time.Millisecond
	}
	_, err := poll(ctx, r, nil)
	if errors.Is(err, errNoAnswer) {
		return &NotReadyError{URL: r.URL, Timeout: r.Timeout}
	}
	return err
}

// poll asks r.URL until it answers (nil), done closes first (exited),
// r.Timeout passes (errNoAnswer) or ctx ends (ctx's error).
func poll(ctx context.Context, r Ready, done <-chan struct{}) (exited bool, err error) {
	deadline := time.NewTimer(r.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(r.Interval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return true, nil
		default:
		}
		if r.Answers != nil && r.Answers(ctx, r.URL) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-done:
			return true, nil
		case <-deadline.C:
			return false, errNoAnswer
		case <-tick.C:
		}
	}
}

func (s *Service) notReady(exited bool) error {
	e := &NotReadyError{URL: s.ready.URL, Timeout: s.ready.Timeout, Exited: exited, Output: s.tail.String()}
	if exited {
		e.Result, e.Err = s.res, s.err
		e.Output = s.tail.String() // complete once Run returned
	}
	return e
}

// Stop ends the service's whole tree (SIGTERM, then SIGKILL after the
// Cmd's grace) and waits for Run to return; it returns how the process
// ended. Stop may be called more than once.
func (s *Service) Stop() (Result, error) {
	s.once.Do(s.cancel)
	<-s.done
	return s.res, s.err
}

// Output is the last of what the service wrote (at most
// serviceTailBytes, from a line start when one is in it).
func (s *Service) Output() string { return s.tail.String() }

// teeTo writes to w (when not nil) and to t.
func teeTo(w io.Writer, t *tailWriter) io.Writer {
	if w == nil {
		return t
	}
	return io.MultiWriter(w, t)
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is what it holds, from its first line start when it was cut.
func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if len(t.buf) >= t.max {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s
}
