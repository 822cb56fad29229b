package slots

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDeletedSlotFilesKeepTheCap is the attack of a step that deletes the
// slot files while sessions hold them: the next pool must not make new
// files of the same names and hand out slots beyond the machine's cap.
func TestDeletedSlotFilesKeepTheCap(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var held []*Slot
	for range 2 {
		s, err := a.Acquire(context.Background(), Holder{Wave: "a"})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, s)
	}
	for _, n := range []string{"slot-0", "slot-1"} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	s, err := b.Acquire(ctx, Holder{Wave: "b"})
	cancel()
	if err == nil {
		t.Fatalf("pool b got slot-%d while pool a holds both slots of the cap of 2 (their files deleted)", s.Index())
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	// Once a's sessions end, the files are made again and b gets its slots.
	for _, s := range held {
		if err := s.Release(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 {
		s, err := b.Acquire(ctx, Holder{Wave: "b"})
		if err != nil {
			t.Fatalf("after a released its slots: %v", err)
		}
		if !sameAsPath(t, s) {
			t.Errorf("slot-%d is held on a file its path no longer names", s.Index())
		}
	}
}

func sameAsPath(t *testing.T, s *Slot) bool {
	t.Helper()
	fi, err := s.File().Stat()
	if err != nil {
		t.Fatal(err)
	}
	pi, err := os.Stat(s.path())
	return err == nil && os.SameFile(fi, pi)
}
