package control

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// requestEvents are the events of the channel's folder that may bring a
// request: Send renames its file in (IN_MOVED_TO); a file written in
// place (IN_CLOSE_WRITE); one linked in (link(2): IN_CREATE only); the
// folder itself going away.
const requestEvents = syscall.IN_MOVED_TO | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF

// parentEvents are the events of the folder that holds the channel's: the
// channel's folder made (IN_CREATE, mkdir) or moved in.
const parentEvents = syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_ONLYDIR

// Watch starts watching the channel (see Watch). The folder need not
// exist: its parent is watched for it, and the folder once it is made.
func (c Channel) Watch() (*Watch, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	parent, base := filepath.Dir(c.Dir), filepath.Base(c.Dir)
	if _, err := syscall.InotifyAddWatch(fd, parent, parentEvents); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("inotify_add_watch "+parent, err)
	}
	// The file is non-blocking: its reads wait in the runtime's poller, and
	// Close wakes a read that waits.
	f := os.NewFile(uintptr(fd), "inotify "+c.Dir)
	// addDir watches the folder: -1 when it is not there (yet: the
	// parent's watch says when it is); an error when inotify refuses it
	// otherwise (ENOSPC: the user's watches are exhausted), for which the
	// watch breaks and the caller polls.
	addDir := func() (int32, error) {
		wd, err := syscall.InotifyAddWatch(fd, c.Dir, requestEvents)
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return -1, nil
		}
		if err != nil {
			return -1, os.NewSyscallError("inotify_add_watch "+c.Dir, err)
		}
		return int32(wd), nil
	}
	dirWD, err := addDir()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	out := make(chan struct{}, 1)
	w := &Watch{C: out, close: f.Close}
	go func() {
		defer close(out)
		var buf [64 * (syscall.SizeofInotifyEvent + syscall.NAME_MAX + 1)]byte
		for {
			n, err := f.Read(buf[:])
			if err != nil {
				if !errors.Is(err, os.ErrClosed) {
					_ = f.Close()
				}
				return
			}
			wake := false
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := buf[off+syscall.SizeofInotifyEvent : min(n, off+syscall.SizeofInotifyEvent+int(ev.Len))]
				off += syscall.SizeofInotifyEvent + int(ev.Len)
				switch {
				case ev.Mask&syscall.IN_Q_OVERFLOW != 0:
					wake = true
				case ev.Wd == dirWD && ev.Mask&syscall.IN_IGNORED != 0:
					dirWD = -1 // the folder went away: the parent's watch says when it is back
					wake = true
				case ev.Wd == dirWD && ev.Mask&syscall.IN_MOVE_SELF != 0:
					// Moved elsewhere: the watch follows it, not the path.
					_, _ = syscall.InotifyRmWatch(fd, uint32(dirWD))
					dirWD = -1
					wake = true
				case ev.Wd == dirWD:
					wake = true
				case string(bytes.TrimRight(name, "\x00")) == base:
					if dirWD, err = addDir(); err != nil { // the folder at the path now
						_ = f.Close()
						return
					}
					wake = true
				}
			}
			if wake {
				select {
				case out <- struct{}{}:
				default: // one is waiting already
				}
			}
		}
	}()
	return w, nil
}
