package executor

import (
	"container/heap"
	"sort"
	"strings"

	"github.com/cadence-run/cadence/spec"
)

// readySet holds ready lots, queued per resource class (kind and
// repositories), each class ordered by longest remaining path, then file
// order. A start decision looks at one head per class, so scheduling stays
// O(n log n) however many lots wait on a busy repository.
type readySet struct {
	classes map[string]*lotHeap
	keys    []string
	where   map[*node]string
}

func newReadySet() *readySet {
	return &readySet{classes: map[string]*lotHeap{}, where: map[*node]string{}}
}

func classKey(l *spec.Lot) string {
	names := []string{l.Kind.String()}
	for _, r := range l.Repos() {
		names = append(names, r.Name)
	}
	return strings.Join(names, "\x00")
}

func (s *readySet) push(n *node) {
	k := classKey(n.lot)
	h := s.classes[k]
	if h == nil {
		h = &lotHeap{}
		s.classes[k] = h
		s.keys = append(s.keys, k)
		sort.Strings(s.keys)
	}
	heap.Push(h, n)
	s.where[n] = k
}

func (s *readySet) remove(n *node) {
	k, ok := s.where[n]
	if !ok {
		return
	}
	h := s.classes[k]
	for i, x := range *h {
		if x == n {
			heap.Remove(h, i)
			break
		}
	}
	delete(s.where, n)
}

// popFitting removes and returns the best ready lot that fits, or nil.
func (s *readySet) popFitting(fits func(*spec.Lot) bool) *node {
	var best *lotHeap
	for _, k := range s.keys {
		h := s.classes[k]
		if h.Len() == 0 || !fits((*h)[0].lot) {
			continue
		}
		if best == nil || before((*h)[0], (*best)[0]) {
			best = h
		}
	}
	if best == nil {
		return nil
	}
	n := heap.Pop(best).(*node)
	delete(s.where, n)
	return n
}

func before(a, b *node) bool {
	if a.plan.Remaining != b.plan.Remaining {
		return a.plan.Remaining > b.plan.Remaining
	}
	return a.lot.Index < b.lot.Index
}

type lotHeap []*node

func (h lotHeap) Len() int           { return len(h) }
func (h lotHeap) Less(i, j int) bool { return before(h[i], h[j]) }
func (h lotHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lotHeap) Push(x any)        { *h = append(*h, x.(*node)) }
func (h *lotHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
