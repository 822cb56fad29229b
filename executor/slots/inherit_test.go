package slots

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestInheritedSlotStaysHeld: a child that inherited a slot's file (a
// session's supervisor) keeps the slot held after this process released
// it, until the child is gone; Inspect shows it held meanwhile.
func TestInheritedSlotStaysHeld(t *testing.T) {
	dir := t.TempDir()
	p, err := Open(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s, err := p.Acquire(context.Background(), Holder{Wave: "w", Lot: "a", Step: "implement"})
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{s.File()}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	infos, err := Inspect(dir)
	if err != nil || len(infos) != 1 || !infos[0].Held {
		t.Fatalf("Inspect after Release with the child alive: %+v, %v", infos, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx, Holder{Wave: "w", Lot: "b"}); err == nil {
		t.Fatal("the slot was handed out again while the child held it")
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	s2, err := p.Acquire(ctx2, Holder{Wave: "w", Lot: "b"})
	if err != nil {
		t.Fatalf("the slot is not free once the child is gone: %v", err)
	}
	_ = s2.Release()
}
