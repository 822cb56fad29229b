package dag

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTopoOrder(t *testing.T) {
	tests := []struct {
		name  string
		nodes []string
		edges []e
		want  []string
	}{
		{name: "empty", want: nil},
		{name: "no edges keeps insertion order", nodes: []string{"c", "a", "b"}, want: []string{"c", "a", "b"}},
		{
			name:  "edge against insertion order",
			nodes: []string{"a", "b", "c"},
			edges: []e{{"c", "a"}},
			want:  []string{"b", "c", "a"},
		},
		{
			// Ready set: {a, d} -> a; {b, d} -> b; {c, d} -> c; then d.
			name:  "smallest ready index first",
			nodes: []string{"a", "b", "c", "d"},
			edges: []e{{"a", "b"}, {"b", "c"}},
			want:  []string{"a", "b", "c", "d"},
		},
		{
			// e (index 4) unblocks a (index 0) late; b, c, d go first.
			name:  "late unblock of early node",
			nodes: []string{"a", "b", "c", "d", "e"},
			edges: []e{{"e", "a"}, {"d", "e"}},
			want:  []string{"b", "c", "d", "e", "a"},
		},
		{
			name:  "diamond",
			nodes: []string{"d", "c", "b", "a"},
			edges: []e{{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}},
			want:  []string{"a", "c", "b", "d"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := build(tc.nodes, tc.edges)
			got, err := g.TopoOrder()
			if err != nil {
				t.Fatalf("TopoOrder() error: %v", err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("TopoOrder() = %v, want %v", got, tc.want)
			}
		})
	}
}

// diamond: a -> b -> d, a -> c -> d, d -> e; weights below.
func diamond() (*Graph[string], func(string) float64) {
	g := build([]string{"a", "b", "c", "d", "e"},
		[]e{{"a", "b"}, {"a", "c"}, {"b", "d"}, {"c", "d"}, {"d", "e"}})
	w := map[string]float64{"a": 1, "b": 2, "c": 5, "d": 3, "e": 0.5}
	return g, func(k string) float64 { return w[k] }
}

func TestLongestPaths(t *testing.T) {
	g, w := diamond()
	calls := 0
	got, err := g.LongestPaths(func(k string) float64 { calls++; return w(k) })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"a": 9.5, "b": 5.5, "c": 8.5, "d": 3.5, "e": 0.5}
	if len(got) != len(want) {
		t.Fatalf("LongestPaths() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("LongestPaths()[%q] = %v, want %v", k, got[k], v)
		}
	}
	if calls != g.Len() {
		t.Errorf("weight called %d times, want %d", calls, g.Len())
	}

	// Negative weights: a path may stop early instead of taking a loss.
	g2 := build(nil, []e{{"x", "y"}, {"y", "z"}})
	w2 := map[string]float64{"x": 1, "y": -5, "z": 2}
	got2, err := g2.LongestPaths(func(k string) float64 { return w2[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got2["x"] != 1 || got2["y"] != -3 || got2["z"] != 2 {
		t.Errorf("LongestPaths() with negative weights = %v", got2)
	}

	if _, err := build(nil, []e{{"a", "b"}, {"b", "a"}}).LongestPaths(w); !isCycleError(err) {
		t.Errorf("LongestPaths() on cycle: err = %v", err)
	}
	if got, err := New[string](0).LongestPaths(w); err != nil || len(got) != 0 {
		t.Errorf("LongestPaths() on empty graph = %v, %v", got, err)
	}
}

func TestCriticalPath(t *testing.T) {
	one := func(string) float64 { return 1 }
	dg, dw := diamond()
	tests := []struct {
		name  string
		g     *Graph[string]
		w     func(string) float64
		path  []string
		total float64
	}{
		{name: "empty", g: New[string](0), w: one},
		{name: "diamond", g: dg, w: dw, path: []string{"a", "c", "d", "e"}, total: 9.5},
		{
			// b and c tie; b is inserted first even though c's edge is older.
			name:  "tie between successors",
			g:     build([]string{"a", "b", "c", "d"}, []e{{"a", "c"}, {"a", "b"}, {"b", "d"}, {"c", "d"}}),
			w:     one,
			path:  []string{"a", "b", "d"},
			total: 3,
		},
		{
			// Two disjoint chains of equal weight: the earliest start wins.
			name:  "tie between starts",
			g:     build([]string{"p", "x", "q", "y"}, []e{{"x", "y"}, {"p", "q"}}),
			w:     one,
			path:  []string{"p", "q"},
			total: 2,
		},
		{
			name:  "heaviest is not the longest",
			g:     build([]string{"a", "b", "c", "h"}, []e{{"a", "b"}, {"b", "c"}}),
			w:     func(k string) float64 { return map[string]float64{"a": 1, "b": 1, "c": 1, "h": 10}[k] },
			path:  []string{"h"},
			total: 10,
		},
		{
			name:  "stops before a loss",
			g:     build(nil, []e{{"x", "y"}, {"y", "z"}}),
			w:     func(k string) float64 { return map[string]float64{"x": 4, "y": -5, "z": 2}[k] },
			path:  []string{"x"},
			total: 4,
		},
		{
			name:  "zero-weight tail is kept",
			g:     build(nil, []e{{"x", "y"}}),
			w:     func(k string) float64 { return map[string]float64{"x": 4}[k] },
			path:  []string{"x", "y"},
			total: 4,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, total, err := tc.g.CriticalPath(tc.w)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(path, tc.path) || total != tc.total {
				t.Errorf("CriticalPath() = %v, %v; want %v, %v", path, total, tc.path, tc.total)
			}
		})
	}
	if _, _, err := build(nil, []e{{"a", "a"}}).CriticalPath(one); !isCycleError(err) {
		t.Errorf("CriticalPath() on cycle: err = %v", err)
	}
}

func isCycleError(err error) bool {
	var ce *CycleError[string]
	return errors.As(err, &ce) && len(ce.Cycles) > 0
}

// TestRandomAgainstNaive cross-checks the algorithms against simple
// quadratic reference implementations on small random graphs.
func TestRandomAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 500; iter++ {
		n := 1 + r.IntN(12)
		m := r.IntN(2 * n)
		acyclic := iter%2 == 0
		g := New[int](n)
		for i := 0; i < n; i++ {
			g.Add(i)
		}
		for j := 0; j < m; j++ {
			a, b := r.IntN(n), r.IntN(n)
			if acyclic {
				if a == b {
					continue
				}
				if a > b { // keep edges forward in a random relabelling
					a, b = b, a
				}
			}
			g.Connect(a, b)
		}
		reach := naiveReach(g)
		checkCycles(t, g, reach)

		hasCycle := false
		for v := 0; v < n; v++ {
			hasCycle = hasCycle || reach[v][v]
		}
		if acyclic && hasCycle {
			t.Fatalf("iter %d: generator produced a cycle", iter)
		}
		order, err := g.TopoOrder()
		if hasCycle != (err != nil) {
			t.Fatalf("iter %d: hasCycle=%v but TopoOrder err=%v", iter, hasCycle, err)
		}
		if err != nil {
			continue
		}
		if want := naiveTopo(g); !slices.Equal(order, want) {
			t.Fatalf("iter %d: TopoOrder() = %v, want %v", iter, order, want)
		}
		pos := make(map[int]int)
		for i, k := range order {
			pos[k] = i
		}
		for _, a := range g.Nodes() {
			for _, b := range g.After(a) {
				if pos[a] >= pos[b] {
					t.Fatalf("iter %d: edge %d->%d violated by %v", iter, a, b, order)
				}
			}
		}
		weights := make([]float64, n)
		for i := range weights {
			weights[i] = float64(r.IntN(10) - 2)
		}
		w := func(k int) float64 { return weights[k] }
		lp, err := g.LongestPaths(w)
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		for i := 0; i < n; i++ {
			want := naiveLongest(g, i, w)
			if lp[i] != want {
				t.Fatalf("iter %d: LongestPaths[%d] = %v, want %v", iter, i, lp[i], want)
			}
			if i == 0 || want > best {
				best = want
			}
		}
		path, total, err := g.CriticalPath(w)
		if err != nil || total != best {
			t.Fatalf("iter %d: CriticalPath total %v, want %v (%v)", iter, total, best, err)
		}
		sum := 0.0
		for i, k := range path {
			sum += w(k)
			if i > 0 && !g.HasEdge(path[i-1], k) {
				t.Fatalf("iter %d: CriticalPath %v is not a path", iter, path)
			}
		}
		if sum != total {
			t.Fatalf("iter %d: CriticalPath %v sums to %v, reported %v", iter, path, sum, total)
		}
	}
}

// naiveReach returns reach[a][b] = there is a non-empty path from a to b.
func naiveReach(g *Graph[int]) [][]bool {
	n := g.Len()
	reach := make([][]bool, n)
	for a := 0; a < n; a++ {
		reach[a] = make([]bool, n)
		for _, b := range g.After(a) {
			reach[a][b] = true
		}
	}
	for k := 0; k < n; k++ {
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if reach[a][k] && reach[k][b] {
					reach[a][b] = true
				}
			}
		}
	}
	return reach
}

// checkCycles verifies Cycles against the transitive closure: one cycle per
// cyclic component, starting at its smallest node, as a real closed path of
// minimal length.
func checkCycles(t *testing.T, g *Graph[int], reach [][]bool) {
	t.Helper()
	n := g.Len()
	var wantStarts []int
	for v := 0; v < n; v++ {
		if !reach[v][v] {
			continue
		}
		earliest := true
		for u := 0; u < v; u++ {
			if reach[u][v] && reach[v][u] {
				earliest = false
				break
			}
		}
		if earliest {
			wantStarts = append(wantStarts, v)
		}
	}
	cycles := g.Cycles()
	if len(cycles) != len(wantStarts) {
		t.Fatalf("Cycles() = %v, want starts %v", cycles, wantStarts)
	}
	for i, c := range cycles {
		s := wantStarts[i]
		if c[0] != s || c[len(c)-1] != s {
			t.Fatalf("Cycles()[%d] = %v, want start %d", i, c, s)
		}
		for j := 1; j < len(c); j++ {
			if !g.HasEdge(c[j-1], c[j]) {
				t.Fatalf("Cycles()[%d] = %v is not a path", i, c)
			}
		}
		if want := naiveShortestCycle(g, s); len(c)-1 != want {
			t.Fatalf("Cycles()[%d] = %v has %d edges, shortest is %d", i, c, len(c)-1, want)
		}
	}
}

// naiveShortestCycle returns the number of edges of the shortest cycle through s.
func naiveShortestCycle(g *Graph[int], s int) int {
	dist := map[int]int{s: 0}
	queue := []int{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range g.After(u) {
			if v == s {
				return dist[u] + 1
			}
			if _, ok := dist[v]; !ok {
				dist[v] = dist[u] + 1
				queue = append(queue, v)
			}
		}
	}
	return -1
}

// naiveLongest is the longest forward path weight from v, by plain recursion.
func naiveLongest(g *Graph[int], v int, w func(int) float64) float64 {
	best := 0.0
	for _, s := range g.After(v) {
		best = max(best, naiveLongest(g, s, w))
	}
	return w(v) + best
}

// naiveTopo repeatedly emits the smallest-index node whose predecessors have
// all been emitted.
func naiveTopo(g *Graph[int]) []int {
	done := make(map[int]bool)
	var out []int
	for len(out) < g.Len() {
		for _, v := range g.Nodes() {
			if done[v] {
				continue
			}
			ready := true
			for _, p := range g.Before(v) {
				ready = ready && done[p]
			}
			if ready {
				done[v] = true
				out = append(out, v)
				break
			}
		}
	}
	return out
}
