package slots

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cadence-run/cadence/internal/flock"
)

// WaveEntry describes a running wave in the registry (waves/<pid>.json).
type WaveEntry struct {
	// PID is the process running the wave; Register and Update set it to
	// the caller's pid.
	PID int `json:"pid"`
	// Wave is the wave's name.
	Wave string `json:"wave"`
	// File is the wave file.
	File string `json:"file,omitempty"`
	// StateFile is the wave's state file.
	StateFile string `json:"state_file,omitempty"`
	// Started is when the apply started; Register fills in the current
	// time when it is zero.
	Started time.Time `json:"started"`
	// MaxSessions is the process's session cap (its slot pool size).
	MaxSessions int `json:"max_sessions"`
	// Status is a short free-form status ("running", "integrating").
	Status string `json:"status,omitempty"`
}

// Registration is this process's entry in the registry of live waves. A
// process has at most one per registry directory.
//
// The entry is two files: <pid>.lock, flocked for the life of the
// registration (the liveness proof; the kernel drops it when the process
// dies), and <pid>.json, the entry itself, replaced atomically (temp file
// and rename) by Register and Update, so a reader never sees half an entry.
// The lock lives in a file of its own because renaming over a flocked file
// would orphan the lock on the old inode.
type Registration struct {
	dir  string
	pid  int
	fl   *flock.File // <pid>.lock, locked exclusively
	mu   sync.Mutex
	done bool
}

// registered guards against a second Register of the same directory in one
// process: it would wait on the flock of the first forever.
var (
	registeredMu sync.Mutex
	registered   = map[string]bool{}
)

// Register adds e, as this process's entry, to the registry in dir (the
// caller passes $CADENCE_HOME/waves), creating dir if needed. Close the
// registration when the wave ends; if the process dies instead, Live
// ignores and removes the entry.
func Register(dir string, e WaveEntry) (*Registration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("slots: register: %w", err)
	}
	pid := os.Getpid()
	lockPath := filepath.Join(dir, strconv.Itoa(pid)+".lock")
	key, err := filepath.Abs(lockPath)
	if err != nil {
		return nil, fmt.Errorf("slots: register: %w", err)
	}
	registeredMu.Lock()
	defer registeredMu.Unlock()
	if registered[key] {
		return nil, fmt.Errorf("slots: register: this process is already registered in %s", dir)
	}
	fl, err := lockEntry(lockPath)
	if err != nil {
		return nil, fmt.Errorf("slots: register: %w", err)
	}
	r := &Registration{dir: dir, pid: pid, fl: fl}
	if e.Started.IsZero() {
		e.Started = time.Now()
	}
	if err := r.write(e); err != nil {
		r.remove()
		return nil, err
	}
	registered[key] = true
	return r, nil
}

// lockEntry takes the flock on an entry's lock file. Live may hold it for a
// moment (while it checks a dead process's entry with our reused pid), and
// may delete the file meanwhile, so after locking it checks that the path
// still names the locked file, and starts over if not.
func lockEntry(path string) (*flock.File, error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		fl, err := flock.Open(path, 0o600)
		if err != nil {
			return nil, err
		}
		ok, err := fl.TryLock()
		if err != nil {
			_ = fl.Close()
			return nil, err
		}
		if ok && current(fl, path) {
			return fl, nil
		}
		_ = fl.Close()
		if ok {
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is held by another process with pid %d (another pid namespace?)", path, os.Getpid())
		}
		time.Sleep(time.Millisecond)
	}
}

// current reports whether the locked fl is still the file at path.
func current(fl *flock.File, path string) bool {
	locked, err := fl.Stat() // fstat of the locked descriptor
	if err != nil {
		return false
	}
	named, err := os.Stat(path)
	return err == nil && os.SameFile(locked, named)
}

// Update replaces the registration's entry with e (PID is set to the
// caller's pid). Readers see either the old or the new entry.
func (r *Registration) Update(e WaveEntry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return errors.New("slots: update: registration closed")
	}
	return r.write(e)
}

func (r *Registration) write(e WaveEntry) error {
	e.PID = r.pid
	base := filepath.Join(r.dir, strconv.Itoa(r.pid))
	if err := writeJSONFile(base+".json.tmp", e); err != nil {
		return fmt.Errorf("slots: write wave entry: %w", err)
	}
	if err := os.Rename(base+".json.tmp", base+".json"); err != nil {
		return fmt.Errorf("slots: write wave entry: %w", err)
	}
	return nil
}

// Close removes the entry and drops its lock. It is idempotent.
func (r *Registration) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return nil
	}
	r.done = true
	err := r.remove()
	registeredMu.Lock()
	if key, aerr := filepath.Abs(r.fl.Path()); aerr == nil {
		delete(registered, key)
	}
	registeredMu.Unlock()
	return err
}

// remove deletes the entry's files, the lock file last and while still
// locked, then unlocks.
func (r *Registration) remove() error {
	base := filepath.Join(r.dir, strconv.Itoa(r.pid))
	err := removeEntry(base)
	return errors.Join(err, r.fl.Unlock(), r.fl.Close())
}

func removeEntry(base string) error {
	var errs []error
	for _, ext := range []string{".json", ".json.tmp", ".lock"} {
		if err := os.Remove(base + ext); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Live returns the entries in dir whose process still holds its lock,
// sorted by pid. Entries of dead processes are ignored and removed. A
// missing dir has no entries.
func Live(dir string) ([]WaveEntry, error) {
	files, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("slots: live waves: %w", err)
	}
	var pids []int
	for _, f := range files {
		name := f.Name()
		stem, _, _ := strings.Cut(name, ".")
		pid, err := strconv.Atoi(stem)
		if err != nil || pid <= 0 || strconv.Itoa(pid) != stem {
			continue
		}
		if ext := name[len(stem):]; ext != ".json" && ext != ".lock" && ext != ".json.tmp" {
			continue
		}
		if !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)

	var live []WaveEntry
	for _, pid := range pids {
		base := filepath.Join(dir, strconv.Itoa(pid))
		if !alive(base) {
			continue
		}
		var e WaveEntry
		data, err := os.ReadFile(base + ".json")
		if err != nil || json.Unmarshal(data, &e) != nil {
			continue // registering or closing right now
		}
		live = append(live, e)
	}
	return live, nil
}

// alive reports whether the entry at base is locked by its owner. If the
// lock can be taken, the owner is dead: the entry is removed while locked.
func alive(base string) bool {
	for range 3 {
		fl, err := flock.Open(base+".lock", 0o600)
		if err != nil {
			return false
		}
		ok, err := fl.TryLock()
		if err != nil || !ok {
			_ = fl.Close()
			return err == nil
		}
		if current(fl, base+".lock") {
			_ = removeEntry(base)
			_ = fl.Close()
			return false
		}
		// The owner removed the file between our open and lock: look again.
		_ = fl.Close()
	}
	return false
}

// writeJSONFile creates or truncates path and writes v into it as JSON.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
