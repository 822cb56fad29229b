package gitint

import (
	"net"
	"syscall"
)

// peerPid is the pid of the process that connected c, from the kernel
// (SO_PEERCRED: the connecting process, as this process's PID namespace
// numbers it; 0 when it is outside it), 0 when it cannot be had.
func peerPid(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}
