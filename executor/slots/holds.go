// Holds: session slots the lead reserves for sessions cadence does not run
// (`cadence hold`), kept in a file, not by a live process.

package slots

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
)

// HoldsFile and HoldsLock are the names, in the slot directory, of the
// holds (a JSON [HoldsRecord], replaced atomically) and of the lock that
// orders every read-modify-write of them (exclusive) and every read of
// them by a pool (shared).
const (
	HoldsFile = "holds.json"
	HoldsLock = "holds.lock"
)

// ExpiredKept is how long an expired hold stays listed (flagged expired)
// before it is dropped: the manual session may still run.
const ExpiredKept = 24 * time.Hour

// ErrNoHold is returned by ReleaseHold for a label that holds nothing.
var ErrNoHold = errors.New("no such hold")

// labelRE is what a hold's label may be: letters, digits, '-', '_', '.',
// not starting with '-' (it would read as a flag), at most 64 characters.
var labelRE = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}$`)

// Hold is one reserved session slot.
type Hold struct {
	// Label names the hold (see ValidLabel).
	Label string `json:"label"`
	// Since is when the hold was first taken (a renewal keeps it).
	Since time.Time `json:"since"`
	// Expires is when the hold stops taking a slot.
	Expires time.Time `json:"expires"`
	// PID is the process that last took or renewed the hold (informative).
	PID int `json:"pid,omitempty"`
}

// Expired reports whether h no longer takes a slot at now.
func (h Hold) Expired(now time.Time) bool { return !now.Before(h.Expires) }

// HoldsRecord is the content of the holds file.
type HoldsRecord struct {
	Holds []Hold `json:"holds"`
}

// ValidLabel returns an error unless label is a safe hold label: 1 to 64
// letters, digits, '-', '_' or '.', not starting with '-'.
func ValidLabel(label string) error {
	if !labelRE.MatchString(label) {
		return fmt.Errorf("hold label %q: use 1 to 64 letters, digits, '-', '_' or '.', not starting with '-'", label)
	}
	return nil
}

// TakeHold reserves a slot under label in the slot directory dir (created
// if needed) until now+ttl; a hold of the same label is renewed (its Since
// is kept, Expires moves). It returns the hold as recorded and whether it
// renewed one. Holds expired for more than ExpiredKept are dropped.
func TakeHold(dir, label string, ttl time.Duration, now time.Time) (Hold, bool, error) {
	if err := ValidLabel(label); err != nil {
		return Hold{}, false, err
	}
	if ttl <= 0 {
		return Hold{}, false, fmt.Errorf("hold %s: ttl %s: must be more than 0", label, ttl)
	}
	var (
		out     Hold
		renewed bool
	)
	err := updateHolds(dir, now, func(r *HoldsRecord) error {
		h := Hold{Label: label, Since: now, Expires: now.Add(ttl), PID: os.Getpid()}
		if i := slices.IndexFunc(r.Holds, func(o Hold) bool { return o.Label == label }); i >= 0 {
			renewed = true
			if !r.Holds[i].Expired(now) {
				h.Since = r.Holds[i].Since
			}
			r.Holds[i] = h
		} else {
			r.Holds = append(r.Holds, h)
		}
		out = h
		return nil
	})
	if err != nil {
		return Hold{}, false, fmt.Errorf("hold %s: %w", label, err)
	}
	return out, renewed, nil
}

// ReleaseHold removes the hold label from dir. A label with no hold (live
// or expired) is ErrNoHold (wrapped).
//
// The label is not checked against ValidLabel: a hold of the file with a
// label hold would refuse (written by hand, or by another tool) can still
// be released.
func ReleaseHold(dir, label string, now time.Time) error {
	err := updateHolds(dir, now, func(r *HoldsRecord) error {
		i := slices.IndexFunc(r.Holds, func(o Hold) bool { return o.Label == label })
		if i < 0 {
			if err := ValidLabel(label); err != nil {
				return err
			}
			return ErrNoHold
		}
		r.Holds = slices.Delete(r.Holds, i, i+1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("release %s: %w", label, err)
	}
	return nil
}

// Holds lists the holds of dir at now, live and expired (those expired
// for more than ExpiredKept left out), sorted by label. It reads under the
// shared holds lock; a missing dir or file has no holds.
func Holds(dir string, now time.Time) ([]Hold, error) {
	r, err := readHolds(dir)
	if err != nil {
		return nil, err
	}
	return visible(r.Holds, now), nil
}

// LiveHolds is the number of holds of dir that take a slot at now.
func LiveHolds(dir string, now time.Time) (int, error) {
	hs, err := Holds(dir, now)
	if err != nil {
		return 0, err
	}
	return liveCount(hs, now), nil
}

func liveCount(hs []Hold, now time.Time) int {
	n := 0
	for _, h := range hs {
		if !h.Expired(now) {
			n++
		}
	}
	return n
}

// visible drops the holds expired for more than ExpiredKept and sorts the
// rest by label.
func visible(hs []Hold, now time.Time) []Hold {
	out := slices.DeleteFunc(slices.Clone(hs), func(h Hold) bool {
		return now.Sub(h.Expires) > ExpiredKept
	})
	slices.SortFunc(out, func(a, b Hold) int {
		switch {
		case a.Label < b.Label:
			return -1
		case a.Label > b.Label:
			return 1
		}
		return 0
	})
	return out
}

// readHolds reads the holds file under the shared holds lock.
func readHolds(dir string) (HoldsRecord, error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return HoldsRecord{}, nil
	}
	fl, err := flock.Open(filepath.Join(dir, HoldsLock), 0o600)
	if err == nil {
		if err = fl.RLock(); err != nil {
			_ = fl.Close()
		}
	}
	if err != nil {
		return HoldsRecord{}, fmt.Errorf("slots: holds: %w", err)
	}
	defer fl.Close()
	return loadHolds(dir)
}

// loadHolds reads the holds file; the caller holds the holds lock.
func loadHolds(dir string) (HoldsRecord, error) {
	var r HoldsRecord
	data, err := os.ReadFile(filepath.Join(dir, HoldsFile))
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("slots: holds: %w", err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("slots: holds file %s: %w", filepath.Join(dir, HoldsFile), err)
	}
	return r, nil
}

// updateHolds runs change on the holds of dir under the exclusive holds
// lock, drops the holds expired for more than ExpiredKept and writes the
// result atomically (temp file and rename). An error of change writes
// nothing.
func updateHolds(dir string, now time.Time, change func(*HoldsRecord) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("slots: %w", err)
	}
	fl, err := flock.Open(filepath.Join(dir, HoldsLock), 0o600)
	if err == nil {
		if err = fl.Lock(); err != nil {
			_ = fl.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("slots: holds: %w", err)
	}
	defer fl.Close()
	r, err := loadHolds(dir)
	if err != nil {
		return err
	}
	if err := change(&r); err != nil {
		return err
	}
	r.Holds = visible(r.Holds, now)
	if r.Holds == nil {
		r.Holds = []Hold{}
	}
	path := filepath.Join(dir, HoldsFile)
	if err := writeJSONFile(path+".tmp", r); err != nil {
		return fmt.Errorf("slots: write holds: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("slots: write holds: %w", err)
	}
	return nil
}
