package slots

import "syscall"

// changeTime is the file's status change time (ctime), in ns since the
// epoch; ok false where the system's stat has none.
func changeTime(st *syscall.Stat_t) (ns int64, ok bool) {
	return st.Ctim.Sec*1e9 + st.Ctim.Nsec, true
}
