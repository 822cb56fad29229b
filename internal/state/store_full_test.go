package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullAfter is a journal file on a disk that fills: the first write after
// room bytes writes what still fits and fails with ENOSPC; once freed
// (free = true), it writes again. It counts the writes it is asked for.
type fullAfter struct {
	*os.File
	room   int
	free   bool
	writes int
}

func (f *fullAfter) Write(p []byte) (int, error) {
	f.writes++
	if f.free || len(p) <= f.room {
		f.room -= len(p)
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:f.room])
	f.room = 0
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// TestStoreFullDiskKeepsWhatWasRecorded: a journal append that fails
// half-way (ENOSPC) is cut back to the last whole record; the store
// writes nothing more, even once space is freed (never retried), and
// every later update returns the error; the state read back is the one
// recorded before the failure, valid, and a new store resumes from it.
func TestStoreFullDiskKeepsWhatWasRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.state.json")
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateLot("a", func(l *Lot) { l.Status = LotRunning; l.Cause = "recorded" }); err != nil {
		t.Fatal(err)
	}
	j := &fullAfter{File: s.journal.(*os.File), room: 10}
	s.journal = j
	err = s.UpdateLot("a", func(l *Lot) { l.Cause = strings.Repeat("x", 200) })
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path+JournalSuffix) {
		t.Fatalf("update on a full disk = %v, want ENOSPC naming the journal", err)
	}
	j.free = true
	writes := j.writes
	for range 3 {
		if err := s.UpdateLot("b", func(l *Lot) { l.Status = LotInterrupted }); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("update after the failure = %v, want the same ENOSPC", err)
		}
	}
	if j.writes != writes {
		t.Errorf("%d journal writes after the failure, want none", j.writes-writes)
	}
	st, _, err := Read(path)
	if err != nil {
		t.Fatalf("the state after ENOSPC cannot be read: %v", err)
	}
	if l := st.Lots["a"]; l == nil || l.Cause != "recorded" || st.Lots["b"] != nil {
		t.Fatalf("state after ENOSPC: %+v, want lot a as recorded before it and no lot b", st.Lots)
	}
	b, _ := os.ReadFile(path + JournalSuffix)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("the journal ends with a torn record: %q", b[max(0, len(b)-40):])
	}
	j.File.Close()
	s2, err := OpenStore(path)
	if err != nil {
		t.Fatalf("reopen after ENOSPC: %v", err)
	}
	defer s2.Close()
	if err := s2.UpdateLot("a", func(l *Lot) { l.Status = LotInterrupted }); err != nil {
		t.Fatal(err)
	}
}
