// The pool's cache of the holds file: a slot request reads the holds
// (Pool.refresh) and this saves it the lock and the read while the file
// is the one read last.

package slots

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// racyWindow is how old the holds file must be (its modification time
// before the time it was read) for its read to be cached. A file
// written again within the same timestamp tick (a few milliseconds on
// Linux, a second or two on some file systems), with the same size and
// an inode number freed by the last rename, would have the same identity
// as the one cached: a file that young is read again every time, as
// git does with its racily clean index. Holds change rarely, so the file
// is almost always older.
const racyWindow = 2 * time.Second

// holdsKey identifies one version of the holds file: every change is a
// new file renamed over it (updateHolds), so another inode, or the same
// number reused with another size or modification time.
type holdsKey struct {
	exists   bool
	dev, ino uint64
	size     int64
	mtime    int64 // nanoseconds
	ctime    int64 // nanoseconds
}

// holdsCache keeps the holds last read from one slot directory with the
// identity of the file they came from. It is safe for concurrent use.
type holdsCache struct {
	mu    sync.Mutex
	ok    bool
	key   holdsKey
	holds []Hold
}

// statHolds is the identity of the holds file of dir now, and whether it
// may be cached (older than racyWindow by the wall clock, whatever clock
// holds expire by, or missing).
func statHolds(dir string) (holdsKey, bool, error) {
	st, err := os.Stat(filepath.Join(dir, HoldsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return holdsKey{}, true, nil
	}
	if err != nil {
		return holdsKey{}, false, err
	}
	k := holdsKey{exists: true, size: st.Size(), mtime: st.ModTime().UnixNano()}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return k, false, nil // no inode: never cached
	}
	k.dev, k.ino = uint64(sys.Dev), uint64(sys.Ino)
	if k.ctime, ok = changeTime(sys); !ok {
		return k, false, nil // no ctime: never cached
	}
	return k, time.Since(st.ModTime()) > racyWindow, nil
}

// live is LiveHolds(dir, now) from the cache while the holds file is the
// one read last (one stat(2)), else read again (under the shared holds
// lock) and cached when it is old enough. A hold taken, renewed or
// released by any process replaces the file, so the next call sees it;
// expiry is computed from the cached holds at each call.
func (c *holdsCache) live(dir string, now time.Time) (int, error) {
	key, cacheable, err := statHolds(dir)
	if err != nil {
		return LiveHolds(dir, now)
	}
	c.mu.Lock()
	if c.ok && c.key == key {
		n := liveCount(c.holds, now)
		c.mu.Unlock()
		return n, nil
	}
	c.mu.Unlock()
	r, err := readHolds(dir)
	if err != nil {
		return 0, err
	}
	// Cache what was read only when the file is still the one stated
	// before the read (a write in between is read again next time).
	after, _, err := statHolds(dir)
	c.mu.Lock()
	c.ok = cacheable && err == nil && after == key
	c.key, c.holds = key, r.Holds
	c.mu.Unlock()
	return liveCount(r.Holds, now), nil
}
