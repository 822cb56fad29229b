// A held slot, its release, and Inspect, which reads the slot files of
// any pool.

package slots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
)

// Index returns n of the slot file slot-n.
func (s *Slot) Index() int { return s.index }

func (s *Slot) path() string { return slotPath(s.pool.dir, s.index) }

// File is the open slot file that holds the slot's lock, valid until
// Release. A process that inherits it (os/exec's ExtraFiles) holds the
// slot along with this one: the kernel frees the slot only once every
// holder closed it or died. Release closes this process's descriptor only.
func (s *Slot) File() *os.File { return s.fl.OS() }

// Release blanks the holder record in the slot file and closes the slot file,
// which unlocks it unless a child still holds it (File). Calling it again does
// nothing and returns nil.
func (s *Slot) Release() error {
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		return nil
	}
	s.released = true
	s.mu.Unlock()

	// Blank the record before unlocking, so the next holder's record is
	// never clobbered and a free slot shows no holder.
	terr := flock.WriteRecord(s.path(), nil)
	if errors.Is(terr, os.ErrNotExist) {
		terr = nil
	}
	uerr := s.fl.Close()
	if s.dirl != nil {
		uerr = errors.Join(uerr, s.dirl.Close())
	}

	p := s.pool
	p.mu.Lock()
	if p.held[s.index] == s {
		p.held[s.index] = nil
	}
	p.busy[s.index] = false
	p.cond.Broadcast()
	p.mu.Unlock()
	return errors.Join(terr, uerr)
}

// Inspect reports every slot file in dir (of whatever pool size), sorted by
// index, and for each whether it is held and by whom. It tests a slot with a
// non-blocking shared lock, dropped at once: that holds off a waiting
// Acquire for a few microseconds at most. A missing dir has no slots.
func Inspect(dir string) ([]SlotInfo, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("slots: %w", err)
	}
	var infos []SlotInfo
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "slot-")
		if !ok || e.IsDir() {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || strconv.Itoa(i) != n {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fl, err := flock.OpenExisting(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed meanwhile
		}
		free := false
		if err == nil {
			free, err = fl.TryRLock()
			_ = fl.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("slots: inspect: %w", err)
		}
		info := SlotInfo{Index: i, Held: !free}
		if !free {
			var h Holder
			if readJSON(path, &h) {
				info.Holder = &h
			}
		}
		infos = append(infos, info)
	}
	slices.SortFunc(infos, func(a, b SlotInfo) int { return a.Index - b.Index })
	return infos, nil
}

func slotPath(dir string, i int) string {
	return filepath.Join(dir, "slot-"+strconv.Itoa(i))
}

// readJSON reads the record a holder wrote. A new holder writes just after
// locking, so a blank or partial record is read again a few times.
func readJSON(path string, v any) bool {
	for attempt := range 5 {
		if attempt > 0 {
			time.Sleep(time.Millisecond)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		if data = bytes.TrimSpace(data); len(data) > 0 && json.Unmarshal(data, v) == nil {
			return true
		}
	}
	return false
}
