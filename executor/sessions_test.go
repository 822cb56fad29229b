package executor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cadence-run/cadence/planner"
	"github.com/cadence-run/cadence/spec"
)

func semNode(index, remaining int) *node {
	return &node{lot: &spec.Lot{Index: index}, plan: &planner.LotPlan{Remaining: time.Duration(remaining)}}
}

// TestPrioritySemAcquireDoneContext: a context already done takes no unit,
// even when one is free, and leaves the unit for the next caller.
func TestPrioritySemAcquireDoneContext(t *testing.T) {
	s := newPrioritySem(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Acquire(ctx, semNode(0, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire on a done context = %v, want context.Canceled", err)
	}
	if !s.canTake() {
		t.Fatal("the refused Acquire took the free unit")
	}
	if err := s.Acquire(context.Background(), semNode(1, 1)); err != nil {
		t.Fatalf("Acquire after the refusal: %v", err)
	}
	if s.canTake() {
		t.Fatal("a unit is still free after the only one was taken")
	}
}

// TestPrioritySemOrder: waiters are served by priority (longest remaining
// path, then file order), not arrival; a waiter whose context ends leaves
// the queue without taking a unit.
func TestPrioritySemOrder(t *testing.T) {
	s := newPrioritySem(1)
	if err := s.Acquire(context.Background(), semNode(0, 1)); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 3)
	wait := func(n *node) {
		go func() {
			if err := s.Acquire(context.Background(), n); err == nil {
				got <- n.lot.Index
			}
		}()
	}
	queued := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			s.mu.Lock()
			n := s.waiters.Len()
			s.mu.Unlock()
			if n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d waiters, want %d", n, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	wait(semNode(3, 1))
	queued(1)
	wait(semNode(2, 5))
	queued(2)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { gone <- s.Acquire(ctx, semNode(1, 9)) }()
	queued(3)
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter = %v, want context.Canceled", err)
	}
	queued(2)
	for _, want := range []int{2, 3} {
		s.Release()
		select {
		case idx := <-got:
			if idx != want {
				t.Fatalf("unit went to lot %d, want %d", idx, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no waiter served, want lot %d", want)
		}
	}
}
