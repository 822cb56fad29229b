// A slot by identity: the lock is taken on the file its path names, and a
// missing slot file is made again only under the folder's lock (see the
// package documentation, Identity).

package slots

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
)

// maxTakeTries bounds how often take opens a slot file again after finding
// that its path names another file than the one it locked.
const maxTakeTries = 64

// take locks slot file i (waiting for it when wait, else only if free) and
// the slot folder shared, and returns both, the slot file being the one
// its path names after the lock (dev, inode): a file replaced or removed
// meanwhile is let go and opened again. ok is false, with no error, when
// the slot is held by another (not wait) or is missing while sessions hold
// slots of the folder (not wait): a missing file is made again only under
// the folder's exclusive lock, which no holder's shared lock allows. With
// wait, a closed pool ends the wait for a missing file with ErrClosed.
func (p *Pool) take(i int, wait bool) (fl, dirl *flock.File, ok bool, err error) {
	path := slotPath(p.dir, i)
	for range maxTakeTries {
		fl, err = flock.OpenExisting(path)
		if errors.Is(err, fs.ErrNotExist) {
			made, err := p.remake(i, wait)
			if err != nil || !made {
				return nil, nil, false, err
			}
			continue
		}
		if err != nil {
			return nil, nil, false, err
		}
		if wait {
			err = fl.Lock()
			ok = err == nil
		} else {
			ok, err = fl.TryLock()
		}
		if err != nil || !ok {
			_ = fl.Close()
			return nil, nil, false, err
		}
		dirl, err = flock.OpenExisting(p.dir)
		if err == nil {
			if err = dirl.RLock(); err != nil {
				_ = dirl.Close()
			}
		}
		if err != nil {
			_ = fl.Close()
			return nil, nil, false, err
		}
		if sameFile(fl, path) {
			return fl, dirl, true, nil
		}
		_ = dirl.Close()
		_ = fl.Close()
	}
	return nil, nil, false, fmt.Errorf("%s keeps being replaced while it is locked", path)
}

// remake makes missing slot file i (recreate) and says whether it is
// there now. With wait it tries again every p.poll until the file is made,
// by this pool or another, or the pool is closed (ErrClosed). It never
// blocks in flock(2) on the folder: a goroutine blocked there for the
// exclusive lock would wait on the shared lock of a slot its own pool took
// meanwhile, perhaps on the very file it waits for, made by a sibling
// grabber; no session of the pool would end that wait.
func (p *Pool) remake(i int, wait bool) (made bool, err error) {
	for {
		made, err = recreate(p.dir, i)
		if err != nil || made || !wait {
			return made, err
		}
		if p.remakeWait != nil {
			p.remakeWait(i)
		}
		select {
		case <-p.done:
			return false, ErrClosed
		case <-time.After(p.poll):
		}
	}
}

// sameFile says whether path names the open file fl (dev and inode).
func sameFile(fl *flock.File, path string) bool {
	fi, err := fl.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(path)
	return err == nil && os.SameFile(fi, pi)
}

// recreate makes slot file i if it is missing, without waiting for a lock
// held by a session, and says whether it is there now. A slot file never
// made before (its index is at or above the count in the folder's file
// "made") is made under the lock of made.lock alone: nobody can hold it. One
// made before and now missing was deleted, perhaps while a session held it
// (its lock lives on with the unlinked file): it is made again only under
// the folder's exclusive lock, which no holder's shared lock allows, so
// not until every session of the folder ended; made is false while that
// lock is busy.
func recreate(dir string, i int) (made bool, err error) {
	dirl, err := flock.OpenExisting(dir)
	if err != nil {
		return false, err
	}
	defer dirl.Close()
	ok, err := dirl.TryLock()
	if err != nil {
		return false, err
	}
	ml, err := flock.Open(filepath.Join(dir, "made.lock"), 0o644)
	if err != nil {
		return false, err
	}
	defer ml.Close()
	if err := ml.Lock(); err != nil {
		return false, err
	}
	if _, err := os.Stat(slotPath(dir, i)); err == nil {
		return true, nil // made meanwhile, under the folder's lock
	}
	count, known := madeCount(dir)
	if !ok && (!known || i < count) {
		return false, nil
	}
	// Under the folder's exclusive lock every deleted slot file is made
	// again, not only this one: no session holds any of them.
	first := i
	if ok {
		first = 0
	}
	for k := first; k <= max(i, count-1); k++ {
		if k != i && !ok {
			continue
		}
		f, err := os.OpenFile(slotPath(dir, k), os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o644)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("slots: %w", err)
		}
		if err == nil {
			_ = f.Close()
		}
	}
	if i >= count {
		return true, writeMade(dir, i+1)
	}
	return true, nil
}

// madeCount reads the count of slot files made in dir (the file "made");
// known is false when it is missing or unreadable.
func madeCount(dir string) (n int, known bool) {
	b, err := os.ReadFile(filepath.Join(dir, "made"))
	if err != nil {
		return 0, false
	}
	n, err = strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil && n >= 0
}

// writeMade records n as the count of slot files made, atomically.
func writeMade(dir string, n int) error {
	tmp := filepath.Join(dir, ".made.tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(n)+"\n"), 0o644); err != nil {
		return fmt.Errorf("slots: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "made")); err != nil {
		return fmt.Errorf("slots: %w", err)
	}
	return nil
}
