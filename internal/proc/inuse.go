package proc

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// InUse returns which of paths (absolute, cleaned) a live process holds,
// as /proc shows it: a process has the file open (git holds its lock file
// open from taking the lock until it renames it), or a mount point at the
// path in the process's mount namespace (a sandbox's bind mount over a
// placeholder). ok is false where /proc cannot tell (no /proc): then the
// caller must take every path for held. Processes of other users are out
// of its sight.
func InUse(paths []string) (held map[string]bool, ok bool) {
	held = map[string]bool{}
	if len(paths) == 0 {
		return held, true
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[filepath.Clean(p)] = true
	}
	list := pids()
	if len(list) == 0 {
		return held, false
	}
	self := os.Getpid()
	seenNS := map[string]bool{}
	for _, pid := range list {
		if pid == self {
			continue
		}
		dir := "/proc/" + strconv.Itoa(pid)
		if fds, err := os.ReadDir(dir + "/fd"); err == nil {
			for _, fd := range fds {
				if t, err := os.Readlink(dir + "/fd/" + fd.Name()); err == nil && want[t] {
					held[t] = true
				}
			}
		}
		ns, err := os.Readlink(dir + "/ns/mnt")
		if err != nil || seenNS[ns] {
			continue
		}
		seenNS[ns] = true
		mountPoints(dir+"/mountinfo", want, held)
	}
	return held, true
}

// mountPoints marks in held the paths of want that are mount points in
// the mountinfo file (proc(5): the fifth field, octal escapes for spaces).
func mountPoints(file string, want, held map[string]bool) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		if p := unescapeMount(fields[4]); want[p] {
			held[p] = true
		}
	}
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
