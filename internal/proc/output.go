package proc

import (
	"io"
	"os"
	"sync"
	"time"
)

// drainWait bounds how long Run reads what a process wrote once its group
// is gone: only a process that left the group (a daemon that called setsid)
// can still hold the pipes open after that.
const drainWait = time.Second

// copyBufs are the buffers the copies of outputs use (32 KiB, io.Copy's
// size), reused from process to process.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// outputs carries a process's standard output and error to writers that are
// not files, through pipes that Run drains itself. exec would copy them too,
// but its Wait then waits for every process that holds the pipe open: a
// descendant left running would hold up the end of the leader, and with it
// the killing of that descendant. Files are handed to the process as they
// are.
type outputs struct {
	readers, writers []*os.File
	wg               sync.WaitGroup
}

// connect returns what the process gets as stdout and stderr. The same
// writer for both gets one pipe, so that it is never written concurrently.
func (o *outputs) connect(stdout, stderr io.Writer) (io.Writer, io.Writer, error) {
	so, err := o.pipe(stdout)
	if err != nil {
		return nil, nil, err
	}
	if same(stdout, stderr) {
		return so, so, nil
	}
	se, err := o.pipe(stderr)
	return so, se, err
}

func (o *outputs) pipe(w io.Writer) (io.Writer, error) {
	if w == nil {
		return nil, nil
	}
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	o.readers = append(o.readers, r)
	o.writers = append(o.writers, pw)
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		buf := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(buf)
		// The reader's WriteTo is hidden: it would copy through a new
		// 32 KiB buffer of its own, for every process.
		_, _ = io.CopyBuffer(w, struct{ io.Reader }{r}, *buf)
	}()
	return pw, nil
}

// started closes the parent's copies of the write ends once the child holds
// its own, so that the readers see the end of output when the child's
// processes are gone.
func (o *outputs) started() {
	for _, w := range o.writers {
		_ = w.Close()
	}
	o.writers = nil
}

// drain waits for the copies to reach the end of output, at most wait, and
// then cuts them off.
func (o *outputs) drain(wait time.Duration) {
	done := make(chan struct{})
	go func() {
		o.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		for _, r := range o.readers {
			_ = r.Close()
		}
		<-done
	}
}

// closeAll releases the pipes: after drain, or when the process did not
// start (which ends the copies).
func (o *outputs) closeAll() {
	o.started()
	for _, r := range o.readers {
		_ = r.Close()
	}
	o.wg.Wait()
}

// same reports whether a and b are the same writer (exec's rule: equal
// comparable values).
func same(a, b io.Writer) (eq bool) {
	if a == nil || b == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}
