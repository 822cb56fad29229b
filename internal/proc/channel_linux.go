package proc

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// The channel between cadence and a step's supervisor: one AF_UNIX
// SOCK_SEQPACKET socket pair, cadence's end and the supervisor's (its fd
// 3). Each message is one line (its newline, if any, is not part of it), at most msgMax bytes:
// from the supervisor "warn TEXT", "pid N", "error TEXT", "limit KIND",
// "exit CODE SIGNAL"; from cadence the commands "stop" and "kill". Both
// ends have SO_PASSCRED, so that each message carries its sender's pid as
// the kernel saw it: a message is believed only from the peer's process
// (cadence's own pid, or the supervisor's), never from a step that took a
// copy of an end (pidfd_getfd; /proc/PID/fd/N of a socket cannot be
// opened). A process with CAP_SYS_ADMIN may forge the pid (unix(7)):
// root's steps are not kept from it, as root may ptrace the supervisor.
const msgMax = 512

// channelCommands are cadence's orders to the supervisor.
const (
	cmdStop = "stop" // SIGTERM to the step's group, SIGKILL to the tree after the grace
	cmdKill = "kill" // SIGKILL to the tree at once
)

// newChannel returns cadence's end (non-blocking, for the poller) and the
// supervisor's (blocking, given to it as fd 3), both close-on-exec in
// cadence.
func newChannel() (mine, theirs *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("supervisor channel: %w", err)
	}
	for _, fd := range fds {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1); err != nil {
			_ = syscall.Close(fds[0])
			_ = syscall.Close(fds[1])
			return nil, nil, fmt.Errorf("supervisor channel: SO_PASSCRED: %w", err)
		}
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		_ = syscall.Close(fds[0])
		_ = syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("supervisor channel: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "supervisor channel"), os.NewFile(uintptr(fds[1]), "supervisor channel"), nil
}

// errChannelEOF is what receive returns once the other end is closed
// everywhere (its process ended).
var errChannelEOF = errors.New("supervisor channel closed")

// receiveFrom returns the next message on fd that process from sent,
// skipping (and counting in forged) those of any other sender; read is how
// fd is read (a poller's wait around recvmsg, or recvmsg itself).
func receiveFrom(from int, forged *int, read func(func(fd int) error) error) (string, error) {
	buf := make([]byte, msgMax)
	oob := make([]byte, syscall.CmsgSpace(syscall.SizeofUcred))
	for {
		var n, oobn int
		err := read(func(fd int) error {
			var e error
			n, oobn, _, _, e = syscall.Recvmsg(fd, buf, oob, 0)
			return e
		})
		if err != nil {
			return "", err
		}
		if n == 0 && oobn == 0 {
			return "", errChannelEOF
		}
		if senderPid(oob[:oobn]) != from {
			*forged++
			continue
		}
		return strings.TrimSuffix(string(buf[:n]), "\n"), nil
	}
}

// senderPid is the pid of the SCM_CREDENTIALS message in oob, or -1.
func senderPid(oob []byte) int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return -1
	}
	for i := range msgs {
		if c, err := syscall.ParseUnixCredentials(&msgs[i]); err == nil {
			return int(c.Pid)
		}
	}
	return -1
}

// readPolled reads cadence's (non-blocking) end f through the runtime's
// poller: op runs each time f is readable, until it says other than EAGAIN.
func readPolled(f *os.File) func(func(fd int) error) error {
	return func(op func(fd int) error) error {
		rc, err := f.SyscallConn()
		if err != nil {
			return err
		}
		var opErr error
		err = rc.Read(func(fd uintptr) bool {
			opErr = op(int(fd))
			return opErr != syscall.EAGAIN
		})
		if err != nil {
			return err
		}
		return opErr
	}
}

// readBlocking reads the supervisor's (blocking) end fd, again after EINTR.
func readBlocking(fd int) func(func(fd int) error) error {
	return func(op func(fd int) error) error {
		for {
			if err := op(fd); err != syscall.EINTR {
				return err
			}
		}
	}
}
