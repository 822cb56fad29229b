package flock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// File is an open lock file: flock(2) on a descriptor of its own, with no
// holder record (a [Lock] is a File plus its record). It is the one place
// cadence calls flock(2).
//
// The lock belongs to the open file description, not to the process: a
// child that inherits the descriptor ([File.OS], os/exec's ExtraFiles)
// holds the lock along with this process, and the kernel drops it only
// when the last descriptor is closed or its holder dies. A File is opened
// close-on-exec (as Go opens every file), so a child inherits it only when
// handed it explicitly. Every Lock, TryLock, RLock or TryRLock call on a
// File converts the lock the description holds (shared to exclusive and
// back); Unlock drops it and keeps the file open, Close drops it with the
// descriptor.
//
// A File is not safe for concurrent use: one goroutine locks, unlocks and
// closes it.
type File struct {
	f *os.File
}

// Open opens the file at path for locking, creating it with mode perm if
// it is missing (not its folder); it does not lock it.
func Open(path string, perm fs.FileMode) (*File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, perm)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &File{f: f}, nil
}

// OpenExisting opens the file or folder at path for locking without
// creating it: a missing path is an error wrapping fs.ErrNotExist.
func OpenExisting(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &File{f: f}, nil
}

// flock is flock(2) on the file, again when a signal interrupts it.
func (l *File) flock(how int) error {
	for {
		err := syscall.Flock(int(l.f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// try is a non-blocking flock(2): false, nil when another description
// holds a conflicting lock.
func (l *File) try(how int) (bool, error) {
	err := l.flock(how | syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	return true, nil
}

func (l *File) wait(how int) error {
	if err := l.flock(how); err != nil {
		return fmt.Errorf("lock %s: %w", l.f.Name(), err)
	}
	return nil
}

// Lock takes the exclusive lock, waiting as long as another description
// holds the file locked.
func (l *File) Lock() error { return l.wait(syscall.LOCK_EX) }

// TryLock takes the exclusive lock if nobody else holds the file locked,
// and says whether it did.
func (l *File) TryLock() (bool, error) { return l.try(syscall.LOCK_EX) }

// RLock takes a shared lock, waiting as long as another description holds
// the exclusive one.
func (l *File) RLock() error { return l.wait(syscall.LOCK_SH) }

// TryRLock takes a shared lock if nobody holds the exclusive one, and
// says whether it did.
func (l *File) TryRLock() (bool, error) { return l.try(syscall.LOCK_SH) }

// Unlock drops this description's lock; the file stays open.
func (l *File) Unlock() error {
	if err := l.flock(syscall.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", l.f.Name(), err)
	}
	return nil
}

// Close closes this process's descriptor: the lock ends with it unless a
// child still holds the inherited file.
func (l *File) Close() error { return l.f.Close() }

// Path returns the path the file was opened with.
func (l *File) Path() string { return l.f.Name() }

// Stat returns the open file's information (fstat(2)): with os.SameFile
// it tells whether the path still names the locked file.
func (l *File) Stat() (os.FileInfo, error) { return l.f.Stat() }

// OS returns the open file that holds the lock, for a child process to
// inherit (os/exec's ExtraFiles); it is valid until Close.
func (l *File) OS() *os.File { return l.f }
