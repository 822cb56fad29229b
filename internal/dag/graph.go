// Package dag implements a small, generic directed graph used to plan and
// schedule waves of work items ("lots") connected by depends_on edges.
//
// An edge from A to B means "A must come before B": B depends on A. Nodes are
// identified by comparable keys and remembered in insertion order ("file
// order"), which every algorithm in this package uses to break ties, so all
// results are deterministic.
//
// Internally each key is mapped once to a dense int index and adjacency is
// kept as []int slices, so every algorithm runs in O(V+E) or O((V+E) log V)
// time. No algorithm recurses: graphs with chains of hundreds of thousands of
// nodes are handled without growing the goroutine stack.
//
// A Graph is not safe for concurrent mutation. Once it has been built, its
// read-only methods (everything except Add and Connect) may be called from
// multiple goroutines concurrently.
package dag

// Graph is a directed graph whose nodes are keys of type K, kept in insertion order.
// An edge from A to B means "A must come before B" (B depends on A).
//
// The zero value is not usable; create graphs with New. A Graph must not be
// mutated concurrently with any other method call, but its read methods may
// run concurrently with each other.
type Graph[K comparable] struct {
	index map[K]int           // key -> dense index (insertion order)
	keys  []K                 // dense index -> key
	pred  [][]int             // pred[i]: direct predecessors of i, in edge creation order
	succ  [][]int             // succ[i]: direct successors of i, in edge creation order
	edges map[uint64]struct{} // set of existing edges (see edgeKey), for duplicate detection
}

// edgeKey packs the edge from -> to into one integer, which hashes faster
// than a struct key. Node indices always fit in 32 bits in practice.
func edgeKey(from, to int) uint64 { return uint64(from)<<32 | uint64(uint32(to)) }

// New returns an empty graph. sizeHint is the expected number of nodes and is
// used only to pre-size internal storage; it may be zero.
func New[K comparable](sizeHint int) *Graph[K] {
	if sizeHint < 0 {
		sizeHint = 0
	}
	return &Graph[K]{
		index: make(map[K]int, sizeHint),
		keys:  make([]K, 0, sizeHint),
		pred:  make([][]int, 0, sizeHint),
		succ:  make([][]int, 0, sizeHint),
		edges: make(map[uint64]struct{}, sizeHint),
	}
}

// Add adds the node k. It reports whether k was added; adding a node that is
// already present is a no-op returning false. The order of Add calls (and of
// the implicit adds done by Connect) defines the insertion order.
func (g *Graph[K]) Add(k K) bool {
	if _, ok := g.index[k]; ok {
		return false
	}
	g.add(k)
	return true
}

// add inserts k unconditionally and returns its index.
func (g *Graph[K]) add(k K) int {
	i := len(g.keys)
	g.index[k] = i
	g.keys = append(g.keys, k)
	g.pred = append(g.pred, nil)
	g.succ = append(g.succ, nil)
	return i
}

// indexOf returns the index of k, adding k if it is missing.
func (g *Graph[K]) indexOf(k K) int {
	if i, ok := g.index[k]; ok {
		return i
	}
	return g.add(k)
}

// Has reports whether k is a node of the graph.
func (g *Graph[K]) Has(k K) bool {
	_, ok := g.index[k]
	return ok
}

// Len returns the number of nodes.
func (g *Graph[K]) Len() int { return len(g.keys) }

// EdgeCount returns the number of distinct edges.
func (g *Graph[K]) EdgeCount() int { return len(g.edges) }

// Nodes returns all nodes in insertion order. The returned slice is a copy.
func (g *Graph[K]) Nodes() []K {
	out := make([]K, len(g.keys))
	copy(out, g.keys)
	return out
}

// Connect adds an edge meaning "before must come before after" (after depends
// on before). Missing nodes are added, before first. Duplicate edges are
// ignored. A self-edge (before == after) is allowed and forms a cycle.
func (g *Graph[K]) Connect(before, after K) {
	from := g.indexOf(before)
	to := g.indexOf(after)
	key := edgeKey(from, to)
	if _, ok := g.edges[key]; ok {
		return
	}
	g.edges[key] = struct{}{}
	g.succ[from] = append(g.succ[from], to)
	g.pred[to] = append(g.pred[to], from)
}

// HasEdge reports whether the edge before -> after exists.
func (g *Graph[K]) HasEdge(before, after K) bool {
	from, ok := g.index[before]
	if !ok {
		return false
	}
	to, ok := g.index[after]
	if !ok {
		return false
	}
	_, ok = g.edges[edgeKey(from, to)]
	return ok
}

// Before returns the direct predecessors (dependencies) of k, in the order the
// edges were created. It returns nil if k is not in the graph or has none.
func (g *Graph[K]) Before(k K) []K {
	i, ok := g.index[k]
	if !ok {
		return nil
	}
	return g.keysOf(g.pred[i])
}

// After returns the direct successors (dependents) of k, in the order the
// edges were created. It returns nil if k is not in the graph or has none.
func (g *Graph[K]) After(k K) []K {
	i, ok := g.index[k]
	if !ok {
		return nil
	}
	return g.keysOf(g.succ[i])
}

// Ancestors returns the roots together with all their transitive
// predecessors, in insertion order. Roots that are not in the graph are
// ignored.
func (g *Graph[K]) Ancestors(roots ...K) []K {
	return g.reach(g.pred, roots)
}

// Descendants returns the roots together with all their transitive
// successors, in insertion order. Roots that are not in the graph are
// ignored.
func (g *Graph[K]) Descendants(roots ...K) []K {
	return g.reach(g.succ, roots)
}

// reach marks every node reachable from roots through adj (roots included)
// and returns the marked nodes in insertion order.
func (g *Graph[K]) reach(adj [][]int, roots []K) []K {
	seen := make([]bool, len(g.keys))
	queue := make([]int, 0, len(roots))
	for _, r := range roots {
		if i, ok := g.index[r]; ok && !seen[i] {
			seen[i] = true
			queue = append(queue, i)
		}
	}
	for head := 0; head < len(queue); head++ {
		for _, v := range adj[queue[head]] {
			if !seen[v] {
				seen[v] = true
				queue = append(queue, v)
			}
		}
	}
	if len(queue) == 0 {
		return nil
	}
	out := make([]K, 0, len(queue))
	for i, ok := range seen {
		if ok {
			out = append(out, g.keys[i])
		}
	}
	return out
}

// keysOf converts a slice of indices to keys; it returns nil for an empty slice.
func (g *Graph[K]) keysOf(idx []int) []K {
	if len(idx) == 0 {
		return nil
	}
	out := make([]K, len(idx))
	for j, i := range idx {
		out[j] = g.keys[i]
	}
	return out
}
