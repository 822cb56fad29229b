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
	// b looks again for the deleted files every 10 ms; none of its
	// goroutines blocks on the folder's lock (remake), whatever the order
	// in which its grabbers find the files made again.
	b, err := open(dir, 2, time.Now, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if s, err := b.tryAll(); err != nil || s != nil {
		t.Fatalf("tryAll with both slot files deleted and held: %v, %v", s, err)
	}
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

// TestSlotMadeAgainWhileWaitingIsTaken is the end state of the race behind
// a pool's two grabbers waiting for deleted slot files: one made them again
// and took its slot (keeping the folder locked shared), so the other must
// take the slot file now there, not wait for the folder's exclusive lock its
// own pool keeps from it. The file is made here as that grabber made it.
func TestSlotMadeAgainWhileWaitingIsTaken(t *testing.T) {
	dir := t.TempDir()
	b, err := open(dir, 2, time.Now, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	first, err := b.Acquire(context.Background(), Holder{Wave: "b"})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	other := 1 - first.Index()
	if err := os.Remove(slotPath(dir, other)); err != nil {
		t.Fatal(err)
	}
	// The deleted file is not made again while b holds a slot of the folder.
	if s, err := b.tryAll(); err != nil || s != nil {
		t.Fatalf("tryAll with slot-%d deleted and slot-%d held: %v, %v", other, first.Index(), s, err)
	}
	waiting := make(chan int, 1)
	b.remakeWait = func(i int) {
		select {
		case waiting <- i:
		default:
		}
	}
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := b.Acquire(ctx, Holder{Wave: "b"})
		if err == nil && s.Index() != other {
			err = errors.New("got the slot it already holds")
		}
		got <- err
	}()
	select {
	case <-waiting:
	case err := <-got:
		t.Fatalf("Acquire ended before waiting for slot-%d: %v", other, err)
	}
	f, err := os.OpenFile(slotPath(dir, other), os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if err := <-got; err != nil {
		t.Fatalf("slot-%d made again while b waited for it: %v", other, err)
	}
}
