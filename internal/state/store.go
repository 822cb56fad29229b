package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// JournalSuffix names the journal kept beside the state file while a wave
// runs: <stem>.state.json.journal.
const JournalSuffix = ".journal"

// minCompact is the journal size below which it is never folded into the
// state file.
const minCompact = 256 << 10

// record is one journal line: a lot's whole new value, or the wave's fields
// (everything but the lots), with the time it was made (the state's
// Updated once replayed).
type record struct {
	Serial int64     `json:"serial"`
	Time   time.Time `json:"time,omitzero"`
	LotID  string    `json:"lot,omitempty"`
	Lot    *Lot      `json:"value,omitempty"`
	Wave   *State    `json:"wave,omitempty"`
}

// Store is the one writer of a wave's state. Every transition is applied in
// memory and appended to the journal as the lot's (or the wave's) new value
// before the call returns, so it costs the size of what changed, not of the
// whole state, and a killed cadence loses nothing it recorded (the kernel
// keeps what was written). The journal is fsynced at most every
// SyncInterval, and the state file on every rewrite: a power loss can cost
// the transitions of the last interval, which resume then replays. When the journal outgrows the state file, the state file is
// rewritten atomically and the journal emptied: the total cost of a run
// stays linear in its transitions. Close folds the journal in and removes it.
//
// A Store is safe for concurrent use.
type Store struct {
	path     string
	mu       sync.Mutex
	st       *State
	journal  journalFile
	jsize    int64
	ssize    int64
	lastSync time.Time
	// failed is the journal's first failed write or sync: the journal is
	// cut back to its last whole record, and every later update is applied
	// in memory only and returns failed (a write is never retried: space
	// another process frees is not taken back). Close still tries the
	// state file once.
	failed error
}

// journalFile is the open journal (an *os.File opened O_APPEND; tests put
// a full disk in its place).
type journalFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// SyncInterval bounds how often the journal is fsynced.
const SyncInterval = 50 * time.Millisecond

// OpenStore opens (or starts) the state of the wave file's state path,
// replaying a journal left by a run that did not finish. A new state has
// FormatVersion set and no lots; the caller fills in the wave fields.
func OpenStore(path string) (*Store, error) {
	st, _, err := Read(path)
	switch {
	case errors.Is(err, ErrNotExist):
		st = &State{FormatVersion: FormatVersion, Lots: map[string]*Lot{}}
	case err != nil:
		return nil, err
	}
	s := &Store{path: path, st: st}
	if fi, err := os.Stat(path); err == nil {
		s.ssize = fi.Size()
	}
	// Fold any journal into a fresh state file now, so that the journal we
	// append to starts empty.
	if err := s.snapshotLocked(); err != nil {
		return nil, err
	}
	j, err := os.OpenFile(path+JournalSuffix, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open state journal: %w", err)
	}
	s.journal = j
	return s, nil
}

// Path is the state file's path.
func (s *Store) Path() string { return s.path }

// View calls fn with the state under the store's lock; fn must not keep it.
func (s *Store) View(fn func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.st)
}

// UpdateLot applies fn to lot id (created queued if absent) and records the
// lot durably before returning. Every update sets the state's Updated.
func (s *Store) UpdateLot(id string, fn func(*Lot)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.st.Lots[id]
	if l == nil {
		l = &Lot{Status: LotQueued}
		s.st.Lots[id] = l
	}
	fn(l)
	s.st.Serial++
	s.st.Updated = time.Now().UTC()
	return s.appendLocked(record{Serial: s.st.Serial, Time: s.st.Updated, LotID: id, Lot: l})
}

// UpdateWave applies fn to the wave's fields and records them durably. fn
// must not change Lots (use UpdateLot).
func (s *Store) UpdateWave(fn func(*State)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.st)
	s.st.Serial++
	s.st.Updated = time.Now().UTC()
	head := *s.st
	head.Lots = nil
	return s.appendLocked(record{Serial: s.st.Serial, Time: s.st.Updated, Wave: &head})
}

func (s *Store) appendLocked(r record) error {
	if s.journal == nil {
		return errors.New("state store is closed")
	}
	start := time.Now()
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode state record: %w", err)
	}
	b = append(b, '\n')
	if s.failed != nil {
		return s.failed
	}
	if n, err := s.journal.Write(b); err != nil {
		if n > 0 {
			// A torn record would make the next one unreadable.
			_ = s.journal.Truncate(s.jsize)
		}
		s.failed = fmt.Errorf("write state journal %s: %w", s.path+JournalSuffix, err)
		return s.failed
	}
	if now := time.Now(); now.Sub(s.lastSync) >= SyncInterval {
		if err := s.journal.Sync(); err != nil {
			s.failed = fmt.Errorf("sync state journal %s: %w", s.path+JournalSuffix, err)
			return s.failed
		}
		s.lastSync = now
	}
	s.jsize += int64(len(b))
	if s.jsize > max(s.ssize, minCompact) {
		if err := s.snapshotLocked(); err != nil {
			return err
		}
		if err := s.journal.Truncate(0); err != nil {
			return fmt.Errorf("truncate state journal: %w", err)
		}
		s.jsize = 0
	}
	logWrite("journal", s.path, r.Serial, len(b), start)
	return nil
}

// snapshotLocked rewrites the state file atomically from memory.
func (s *Store) snapshotLocked() error {
	start := time.Now()
	b, err := json.MarshalIndent(s.st, "", " ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	b = append(b, '\n')
	if err := WriteFileAtomic(s.path, b); err != nil {
		return err
	}
	s.ssize = int64(len(b))
	logWrite("snapshot", s.path, s.st.Serial, len(b), start)
	return nil
}

// logWrite logs a state write (a journal record or a rewrite of the state
// file: its serial, size and duration) at debug level on the "state"
// sub-logger of hclog.L() (which internal/cli sets).
func logWrite(what, path string, serial int64, size int, start time.Time) {
	if l := hclog.L(); l.IsDebug() {
		l.Named("state").Debug("write "+what, "path", path, "serial", serial, "bytes", size, "duration", time.Since(start))
	}
}

// Close writes the state file and removes the journal.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal == nil {
		return nil
	}
	err := s.snapshotLocked()
	s.journal.Close()
	s.journal = nil
	if err == nil {
		err = os.Remove(s.path + JournalSuffix)
	}
	return err
}

// replayJournal applies the records of a journal to st: records at or below
// st.Serial are already in the state file (a crash between rewriting it and
// emptying the journal); a torn last line (a crash mid-append) is ignored.
func replayJournal(st *State, r io.Reader) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] != '\n' {
			return nil // torn last record: it was never acknowledged
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var rec record
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				return fmt.Errorf("state journal: %w", jerr)
			}
			if rec.Serial > st.Serial {
				if rec.Wave == nil && rec.LotID == "" && rec.Lot != nil {
					return fmt.Errorf("state journal: a lot record without a lot id (serial %d)", rec.Serial)
				}
				switch {
				case rec.Wave != nil:
					lots := st.Lots
					*st = *rec.Wave
					st.Lots = lots
				case rec.LotID != "" && rec.Lot != nil:
					st.Lots[rec.LotID] = rec.Lot
				}
				st.Serial = rec.Serial
				if rec.Time.After(st.Updated) {
					st.Updated = rec.Time
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
