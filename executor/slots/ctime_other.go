//go:build !linux && !darwin

package slots

import "syscall"

// changeTime is the file's status change time (ctime); this system's
// stat is not read for it (ok false: the holds file is never cached).
func changeTime(*syscall.Stat_t) (ns int64, ok bool) { return 0, false }
