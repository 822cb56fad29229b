package dag

// TopoOrder returns every node in a topological order: each node comes after
// all of its predecessors. It uses Kahn's algorithm and, among the nodes that
// are ready at any point, always emits the one with the smallest insertion
// index, so the result is deterministic and as close to insertion order as
// the edges allow. It runs in O((V+E) log V) time.
//
// If the graph has a cycle, TopoOrder returns a nil slice and a *CycleError.
func (g *Graph[K]) TopoOrder() ([]K, error) {
	order, ok := g.topo()
	if !ok {
		return nil, g.cycleError()
	}
	return g.keysOf(order), nil
}

// cycleError builds the error reported when an acyclic graph was required.
func (g *Graph[K]) cycleError() error {
	return &CycleError[K]{Cycles: g.Cycles()}
}

// topo is TopoOrder on dense indices. It reports false if the graph is
// cyclic, in which case the returned order is incomplete.
func (g *Graph[K]) topo() ([]int, bool) {
	n := len(g.keys)
	indeg := make([]int, n)
	var ready minHeap
	for v := 0; v < n; v++ {
		indeg[v] = len(g.pred[v])
		if indeg[v] == 0 {
			// v is increasing, so appending keeps the heap property.
			ready = append(ready, v)
		}
	}
	order := make([]int, 0, n)
	for len(ready) > 0 {
		v := ready.pop()
		order = append(order, v)
		for _, w := range g.succ[v] {
			indeg[w]--
			if indeg[w] == 0 {
				ready.push(w)
			}
		}
	}
	return order, len(order) == n
}

// LongestPaths returns, for every node, the largest sum of weights along any
// path that starts at that node and follows edges forward, including the
// node's own weight. With non-negative weights this is the "remaining
// critical path" of the node and is useful as a scheduling priority.
//
// weight is called exactly once per node. A path may stop at any node, so a
// node whose successors all have negative path sums gets just its own weight.
// LongestPaths runs in O((V+E) log V) time (dominated by the topological
// sort) and returns a *CycleError if the graph has a cycle.
func (g *Graph[K]) LongestPaths(weight func(K) float64) (map[K]float64, error) {
	dist, err := g.longest(weight)
	if err != nil {
		return nil, err
	}
	out := make(map[K]float64, len(dist))
	for v, d := range dist {
		out[g.keys[v]] = d
	}
	return out, nil
}

// CriticalPath returns the heaviest path in the graph (the path with the
// largest sum of node weights) and its total weight. Ties are broken by
// insertion order: the path starts at the earliest-inserted node of maximal
// path weight, and at each step continues to the earliest-inserted successor
// that keeps the path maximal. The path is extended as long as doing so does
// not reduce its weight, so with non-negative weights it always ends at a
// node without successors.
//
// It returns a nil path and 0 for an empty graph, and a *CycleError if the
// graph has a cycle.
func (g *Graph[K]) CriticalPath(weight func(K) float64) ([]K, float64, error) {
	n := len(g.keys)
	if n == 0 {
		return nil, 0, nil
	}
	dist, err := g.longest(weight)
	if err != nil {
		return nil, 0, err
	}
	start := 0
	for v := 1; v < n; v++ {
		if dist[v] > dist[start] {
			start = v
		}
	}
	path := []K{g.keys[start]}
	v := start
	for {
		next := -1
		for _, w := range g.succ[v] {
			if next < 0 || dist[w] > dist[next] || (dist[w] == dist[next] && w < next) {
				next = w
			}
		}
		if next < 0 || dist[next] < 0 {
			break
		}
		path = append(path, g.keys[next])
		v = next
	}
	return path, dist[start], nil
}

// longest computes, per node index, the longest forward path weight starting
// at that node, processing nodes in reverse topological order.
func (g *Graph[K]) longest(weight func(K) float64) ([]float64, error) {
	order, ok := g.topo()
	if !ok {
		return nil, g.cycleError()
	}
	dist := make([]float64, len(g.keys))
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		best := 0.0
		for _, w := range g.succ[v] {
			if dist[w] > best {
				best = dist[w]
			}
		}
		dist[v] = weight(g.keys[v]) + best
	}
	return dist, nil
}

// minHeap is a binary min-heap of node indices. It avoids container/heap's
// interface boxing on the hot path of TopoOrder.
type minHeap []int

// push adds x to the heap.
func (h *minHeap) push(x int) {
	a := append(*h, x)
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
	*h = a
}

// pop removes and returns the smallest element. The heap must not be empty.
func (h *minHeap) pop() int {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(a) {
			break
		}
		m := l
		if r := l + 1; r < len(a) && a[r] < a[l] {
			m = r
		}
		if a[i] <= a[m] {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
