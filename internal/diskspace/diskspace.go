// Package diskspace measures the free space of file systems and says when
// an error is a full disk. It imports nothing of cadence's and starts no
// process (statfs and stat only).
package diskspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"syscall"
)

// Free is the space an unprivileged writer may still use on the file
// system holding path (statfs's f_bavail blocks), in bytes, and that file
// system's mount point. A path that does not exist yet is measured at its
// nearest existing parent.
func Free(path string) (free uint64, mount string, err error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return 0, "", err
	}
	var st syscall.Statfs_t
	for {
		err = syscall.Statfs(p, &st)
		if !errors.Is(err, syscall.ENOENT) || p == filepath.Dir(p) {
			break
		}
		p = filepath.Dir(p)
	}
	if err != nil {
		return 0, "", &fs.PathError{Op: "statfs", Path: p, Err: err}
	}
	return uint64(st.Bavail) * uint64(st.Bsize), mountPoint(p), nil
}

// mountPoint is the topmost folder above p (p included) on p's device.
func mountPoint(p string) string {
	var st syscall.Stat_t
	if syscall.Stat(p, &st) != nil {
		return p
	}
	dev := st.Dev
	for p != filepath.Dir(p) {
		up := filepath.Dir(p)
		if syscall.Stat(up, &st) != nil || st.Dev != dev {
			return p
		}
		p = up
	}
	return p
}

// FullError is a write that failed for a full disk (ENOSPC) or an
// exhausted quota (EDQUOT): the path written, the error, and the free
// space measured when it was made.
type FullError struct {
	// Path is the file (or folder) whose write failed.
	Path string
	// Err is the write's error.
	Err error
	// Free is the free space on Path's file system, in bytes, and Mount
	// that file system's mount point ("" when it could not be measured).
	Free  uint64
	Mount string
}

// Error reads "disk full: <path>: <error> (<free> free on <mount>)".
func (e *FullError) Error() string {
	msg := "disk full: " + e.Path + ": " + errText(e.Err)
	if e.Mount != "" {
		msg += fmt.Sprintf(" (%s free on %s)", Bytes(e.Free), e.Mount)
	}
	return msg
}

func (e *FullError) Unwrap() error { return e.Err }

// errText is err's innermost errno text when it has one ("no space left
// on device"), else err's own text.
func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// IsFull reports whether err is a full disk or an exhausted quota.
func IsFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Full returns err as a *FullError when it is a full disk (IsFull), with
// the path: err's own (an *fs.PathError, a *FullError), else path; and
// the free space measured now. It returns nil for any other error.
func Full(err error, path string) *FullError {
	if !IsFull(err) {
		return nil
	}
	var fe *FullError
	if errors.As(err, &fe) {
		return fe
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path != "" {
		path = pe.Path
	}
	e := &FullError{Path: path, Err: err}
	if path != "" {
		e.Free, e.Mount, _ = Free(path)
	}
	return e
}

// Bytes renders n in binary units: "0 B", "512 B", "1.5 KiB", "38.2 MiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	v := strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64)
	if len(v) > 2 && v[len(v)-2:] == ".0" {
		v = v[:len(v)-2]
	}
	return v + " " + string("KMGTPE"[exp]) + "iB"
}
