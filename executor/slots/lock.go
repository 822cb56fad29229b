package slots

import (
	"errors"
	"os"
	"syscall"
)

// fileLock is an exclusive flock(2) on one open slot file. The lock belongs
// to the open file description: a process that inherits the descriptor
// (a session's supervisor, through Slot.File) holds the lock with it, and
// the kernel drops it when the last descriptor is closed, so a session's
// slot stays taken until its last process is gone, even when cadence dies
// first. gofrs/flock does the same but keeps the file to itself.
type fileLock struct {
	f *os.File
}

// openLock opens the slot file at path (close-on-exec, as Go opens every
// file), creating it if needed; it does not lock it.
func openLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &fileLock{f: f}, nil
}

// flock is flock(2) on l's file, again when a signal interrupts it.
func (l *fileLock) flock(how int) error {
	for {
		err := syscall.Flock(int(l.f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// lock waits for the lock.
func (l *fileLock) lock() error { return l.flock(syscall.LOCK_EX) }

// tryLock takes the lock if it is free and says whether it did.
func (l *fileLock) tryLock() (bool, error) {
	err := l.flock(syscall.LOCK_EX | syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// close closes this process's descriptor: the lock ends with it unless a
// child (a supervisor) still holds the file.
func (l *fileLock) close() error { return l.f.Close() }
