package proc

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxIdle is how many idle supervisors the pool keeps; more are let go.
const maxIdle = 8

// pooled is a started supervisor (Supervise, serve mode) and cadence's end
// of its socket. Starting one costs an exec of the cadence binary (about
// 20 ms of CPU on a small VM, more than a short step itself), so one is
// reused for step after step: it takes a new step only once it reported
// the end of the last one, that is once every process of that step's
// tree is gone.
type pooled struct {
	s    supervisor
	cmd  *exec.Cmd
	conn *net.UnixConn
	// lines are the supervisor's reports, in order; closed when its
	// socket ends (it exited, or was killed).
	lines chan string
	// dead is closed once the supervisor is waited for; waitErr is then
	// cmd.Wait's error.
	dead    chan struct{}
	waitErr error
	// signalled is set once cadence signalled the supervisor (a stop,
	// KillAll): it is not reused.
	signalled atomic.Bool
}

var pool struct {
	mu   sync.Mutex
	idle []*pooled
}

// takeSupervisor returns an idle supervisor of s, or starts one.
func takeSupervisor(s supervisor) (*pooled, error) {
	pool.mu.Lock()
	for len(pool.idle) > 0 {
		p := pool.idle[len(pool.idle)-1]
		pool.idle = pool.idle[:len(pool.idle)-1]
		select {
		case <-p.dead:
			continue
		default:
		}
		if p.s == s {
			pool.mu.Unlock()
			return p, nil
		}
		p.retire()
	}
	pool.mu.Unlock()
	return startSupervisor(s)
}

// startSupervisor starts a supervisor of s in its own process group, out of
// reach of the terminal's signals, with an empty environment and its socket
// as fd 3.
func startSupervisor(s supervisor) (*pooled, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "supervisor socket"), os.NewFile(uintptr(fds[1]), "supervisor socket")
	defer theirs.Close()
	fc, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	conn := fc.(*net.UnixConn)
	cmd := exec.Command(s.exe)
	cmd.Args = []string{s.argv0, SupervisorCommand, strconv.Itoa(os.Getpid()), "serve"}
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := startLocked(cmd); err != nil {
		conn.Close()
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	p := &pooled{s: s, cmd: cmd, conn: conn, lines: make(chan string, 4), dead: make(chan struct{})}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(conn)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.dead)
	}()
	return p, nil
}

// release puts p back into the pool after a step it reported the end of,
// or lets it go when it was signalled or the pool is full.
func (p *pooled) release() {
	if p.signalled.Load() {
		p.retire()
		return
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if len(pool.idle) >= maxIdle {
		p.retire()
		return
	}
	pool.idle = append(pool.idle, p)
}

// retire lets p go: its socket is closed, and an idle supervisor exits on
// that (one still running a step finishes it first).
func (p *pooled) retire() {
	_ = p.conn.Close()
}

// dropIdle lets every idle supervisor go and, with wait, waits until they
// have exited.
func dropIdle(wait bool) {
	pool.mu.Lock()
	idle := pool.idle
	pool.idle = nil
	pool.mu.Unlock()
	for _, p := range idle {
		p.retire()
	}
	for _, p := range idle {
		if wait {
			<-p.dead
		}
	}
}

// stdin is the file a supervised step gets as its standard input: the
// caller's file, or a pipe that a goroutine fills from the caller's
// reader (as os/exec does).
type stdin struct {
	file   *os.File
	made   bool // file is the read end of our pipe
	w      *os.File
	copied chan struct{}
}

func connectStdin(r io.Reader) (*stdin, error) {
	if r == nil {
		return &stdin{}, nil
	}
	if f, ok := r.(*os.File); ok {
		return &stdin{file: f}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	in := &stdin{file: pr, made: true, w: pw, copied: make(chan struct{})}
	go func() {
		defer close(in.copied)
		_, _ = io.Copy(pw, r)
		_ = pw.Close()
	}()
	return in, nil
}

// started closes our copy of the pipe's read end once the supervisor has
// its own.
func (in *stdin) started() {
	if in.made {
		_ = in.file.Close()
	}
}

// finish waits for the copy to end (the step's tree, gone, no longer reads
// it), at most drainWait, then cuts it off.
func (in *stdin) finish() {
	if !in.made {
		return
	}
	in.started()
	t := time.NewTimer(drainWait)
	defer t.Stop()
	select {
	case <-in.copied:
	case <-t.C:
		_ = in.w.Close()
		<-in.copied
	}
}
