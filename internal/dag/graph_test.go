package dag

import (
	"slices"
	"sync"
	"testing"
)

// e is a test edge: before -> after.
type e [2]string

// build creates a graph by adding nodes in order, then connecting edges.
func build(nodes []string, edges []e) *Graph[string] {
	g := New[string](len(nodes))
	for _, n := range nodes {
		g.Add(n)
	}
	for _, ed := range edges {
		g.Connect(ed[0], ed[1])
	}
	return g
}

func TestAddHasLenNodes(t *testing.T) {
	g := New[string](0)
	if g.Len() != 0 || len(g.Nodes()) != 0 {
		t.Fatalf("new graph not empty")
	}
	for _, tc := range []struct {
		key  string
		want bool
	}{{"b", true}, {"a", true}, {"b", false}, {"c", true}, {"a", false}} {
		if got := g.Add(tc.key); got != tc.want {
			t.Errorf("Add(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
	if got, want := g.Nodes(), []string{"b", "a", "c"}; !slices.Equal(got, want) {
		t.Errorf("Nodes() = %v, want %v", got, want)
	}
	if g.Len() != 3 {
		t.Errorf("Len() = %d, want 3", g.Len())
	}
	if !g.Has("a") || g.Has("z") {
		t.Errorf("Has wrong")
	}
	// Nodes returns a copy.
	g.Nodes()[0] = "mutated"
	if g.Nodes()[0] != "b" {
		t.Errorf("Nodes() exposes internal storage")
	}
	if New[int](-5).Len() != 0 {
		t.Errorf("negative size hint")
	}
}

func TestConnect(t *testing.T) {
	g := New[string](0)
	g.Add("x")
	g.Connect("a", "b") // adds a then b
	g.Connect("a", "b") // duplicate, ignored
	g.Connect("c", "b")
	g.Connect("a", "c")
	g.Connect("d", "d") // self-edge
	g.Connect("d", "d")

	if got, want := g.Nodes(), []string{"x", "a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("Nodes() = %v, want %v", got, want)
	}
	if got := g.EdgeCount(); got != 4 {
		t.Errorf("EdgeCount() = %d, want 4", got)
	}
	tests := []struct {
		node          string
		before, after []string
	}{
		{"x", nil, nil},
		{"a", nil, []string{"b", "c"}},
		{"b", []string{"a", "c"}, nil},
		{"c", []string{"a"}, []string{"b"}},
		{"d", []string{"d"}, []string{"d"}},
		{"missing", nil, nil},
	}
	for _, tc := range tests {
		if got := g.Before(tc.node); !slices.Equal(got, tc.before) {
			t.Errorf("Before(%q) = %v, want %v", tc.node, got, tc.before)
		}
		if got := g.After(tc.node); !slices.Equal(got, tc.after) {
			t.Errorf("After(%q) = %v, want %v", tc.node, got, tc.after)
		}
	}
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"a", "b", true}, {"b", "a", false}, {"d", "d", true},
		{"a", "x", false}, {"zz", "a", false}, {"a", "zz", false},
	} {
		if got := g.HasEdge(tc.from, tc.to); got != tc.want {
			t.Errorf("HasEdge(%q, %q) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestAncestorsDescendants(t *testing.T) {
	// a -> b -> d -> e, a -> c -> d, f -> c, g isolated, h <-> i cycle, i -> e.
	g := build(
		[]string{"a", "b", "c", "d", "e", "f", "g", "h", "i"},
		[]e{{"a", "b"}, {"b", "d"}, {"d", "e"}, {"a", "c"}, {"c", "d"}, {"f", "c"}, {"h", "i"}, {"i", "h"}, {"i", "e"}},
	)
	tests := []struct {
		name        string
		roots       []string
		ancestors   []string
		descendants []string
	}{
		{"none", nil, nil, nil},
		{"unknown", []string{"zz"}, nil, nil},
		{"isolated", []string{"g"}, []string{"g"}, []string{"g"}},
		{"source", []string{"a"}, []string{"a"}, []string{"a", "b", "c", "d", "e"}},
		{"sink", []string{"e"}, []string{"a", "b", "c", "d", "e", "f", "h", "i"}, []string{"e"}},
		{"middle", []string{"c"}, []string{"a", "c", "f"}, []string{"c", "d", "e"}},
		{"multiple roots out of order", []string{"f", "b", "zz", "b"}, []string{"a", "b", "f"}, []string{"b", "c", "d", "e", "f"}},
		{"cycle", []string{"h"}, []string{"h", "i"}, []string{"e", "h", "i"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := g.Ancestors(tc.roots...); !slices.Equal(got, tc.ancestors) {
				t.Errorf("Ancestors(%v) = %v, want %v", tc.roots, got, tc.ancestors)
			}
			if got := g.Descendants(tc.roots...); !slices.Equal(got, tc.descendants) {
				t.Errorf("Descendants(%v) = %v, want %v", tc.roots, got, tc.descendants)
			}
		})
	}
}

// chain builds 0 -> 1 -> ... -> n-1, optionally closing the loop n-1 -> 0.
func chain(n int, closed bool) *Graph[int] {
	g := New[int](n)
	for i := 1; i < n; i++ {
		g.Connect(i-1, i)
	}
	if closed {
		g.Connect(n-1, 0)
	}
	return g
}

func TestHugeChain(t *testing.T) {
	const n = 100_000
	g := chain(n, false)

	if c := g.Cycles(); c != nil {
		t.Fatalf("Cycles() on chain = %d cycles", len(c))
	}
	order, err := g.TopoOrder()
	if err != nil || len(order) != n || order[0] != 0 || order[n-1] != n-1 {
		t.Fatalf("TopoOrder() bad: len %d err %v", len(order), err)
	}
	if got := g.Ancestors(n - 1); len(got) != n {
		t.Errorf("Ancestors(last) has %d nodes", len(got))
	}
	if got := g.Descendants(0); len(got) != n {
		t.Errorf("Descendants(first) has %d nodes", len(got))
	}
	lp, err := g.LongestPaths(func(int) float64 { return 1 })
	if err != nil || lp[0] != n || lp[n-1] != 1 {
		t.Errorf("LongestPaths: %v %v %v", lp[0], lp[n-1], err)
	}
	path, total, err := g.CriticalPath(func(int) float64 { return 1 })
	if err != nil || len(path) != n || total != n {
		t.Errorf("CriticalPath: len %d total %v err %v", len(path), total, err)
	}

	// Close the loop: one giant cycle that Tarjan must walk without recursion.
	g.Connect(n-1, 0)
	cycles := g.Cycles()
	if len(cycles) != 1 || len(cycles[0]) != n+1 || cycles[0][0] != 0 || cycles[0][n] != 0 || cycles[0][n-1] != n-1 {
		t.Fatalf("Cycles() on closed chain wrong: %d cycles", len(cycles))
	}
	if _, err := g.TopoOrder(); err == nil {
		t.Fatalf("TopoOrder() on closed chain: no error")
	}
}

func TestConcurrentReads(t *testing.T) {
	g := randomDAG(2000, 3, 7)
	want, _ := g.TopoOrder()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := g.TopoOrder()
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("concurrent TopoOrder differs")
			}
			g.Cycles()
			g.Ancestors(want[len(want)-1])
			g.Descendants(want[0])
			g.LongestPaths(func(string) float64 { return 1 })
			g.CriticalPath(func(string) float64 { return 1 })
			g.Before(want[len(want)-1])
			g.After(want[0])
			g.Nodes()
		})
	}
	wg.Wait()
}
