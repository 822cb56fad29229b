package dag

import (
	"fmt"
	"strings"
)

// CycleError is returned by algorithms that require an acyclic graph when the
// graph contains cycles. Cycles holds one closed path per cyclic strongly
// connected component, exactly as returned by Graph.Cycles.
type CycleError[K comparable] struct {
	Cycles [][]K
}

// Error lists the cycles as "a -> b -> c -> a", separated by "; ".
func (e *CycleError[K]) Error() string {
	var b strings.Builder
	if len(e.Cycles) == 1 {
		b.WriteString("dependency cycle: ")
	} else {
		fmt.Fprintf(&b, "%d dependency cycles: ", len(e.Cycles))
	}
	for i, c := range e.Cycles {
		if i > 0 {
			b.WriteString("; ")
		}
		for j, k := range c {
			if j > 0 {
				b.WriteString(" -> ")
			}
			fmt.Fprint(&b, k)
		}
	}
	return b.String()
}

// Cycles returns one cycle for each strongly connected component that
// contains a cycle: every component with two or more nodes, and every single
// node with a self-edge. Each cycle is a closed path [a, b, c, a] that follows
// edges forward, starts at the component's earliest-inserted node, and is a
// shortest cycle through that node within the component (found by BFS,
// exploring edges in creation order). Cycles are ordered by the insertion
// index of their first node. It returns nil if the graph is acyclic.
//
// A self-edge on a node that also belongs to a larger component is not
// reported separately; it is reported only if it is the shortest cycle
// through the component's earliest node.
//
// Cycles runs in O(V+E) time and does not recurse.
func (g *Graph[K]) Cycles() [][]K {
	cycles := g.cycles()
	if len(cycles) == 0 {
		return nil
	}
	out := make([][]K, len(cycles))
	for i, c := range cycles {
		out[i] = g.keysOf(c)
	}
	return out
}

// cycles is Cycles on dense indices.
func (g *Graph[K]) cycles() [][]int {
	n := len(g.keys)
	comp, ncomp := g.scc()

	// A component is cyclic if it has more than one node, or if its single
	// node has a self-edge.
	size := make([]int, ncomp)
	for _, c := range comp {
		size[c]++
	}
	cyclic := make([]bool, ncomp)
	for v := 0; v < n; v++ {
		c := comp[v]
		if size[c] > 1 {
			cyclic[c] = true
			continue
		}
		for _, w := range g.succ[v] {
			if w == v {
				cyclic[c] = true
				break
			}
		}
	}

	// Visit nodes in insertion order: the first node met in each cyclic
	// component is its earliest node. The BFS of a component only touches
	// that component, so seen/parent never need resetting and the total work
	// stays linear.
	var out [][]int
	emitted := make([]bool, ncomp)
	seen := make([]bool, n)
	parent := make([]int, n)
	var queue []int
	for s := 0; s < n; s++ {
		c := comp[s]
		if !cyclic[c] || emitted[c] {
			continue
		}
		emitted[c] = true
		queue = append(queue[:0], s)
		seen[s] = true
	bfs:
		for head := 0; head < len(queue); head++ {
			u := queue[head]
			for _, v := range g.succ[u] {
				if v == s {
					out = append(out, closePath(parent, s, u))
					break bfs
				}
				if comp[v] == c && !seen[v] {
					seen[v] = true
					parent[v] = u
					queue = append(queue, v)
				}
			}
		}
	}
	return out
}

// closePath rebuilds the BFS path s -> ... -> u from parent links and closes
// it with the edge u -> s.
func closePath(parent []int, s, u int) []int {
	var rev []int
	for x := u; x != s; x = parent[x] {
		rev = append(rev, x)
	}
	path := make([]int, 0, len(rev)+2)
	path = append(path, s)
	for i := len(rev) - 1; i >= 0; i-- {
		path = append(path, rev[i])
	}
	return append(path, s)
}

// scc labels every node with its strongly connected component using an
// iterative version of Tarjan's algorithm. It returns the component of each
// node and the number of components.
func (g *Graph[K]) scc() (comp []int, ncomp int) {
	n := len(g.keys)
	num := make([]int, n) // discovery number + 1; 0 means unvisited
	low := make([]int, n)
	onStack := make([]bool, n)
	comp = make([]int, n)
	var stack []int

	// frame is one simulated recursive call: node v, next successor index i.
	type frame struct{ v, i int }
	var calls []frame
	counter := 0

	visit := func(v int) {
		counter++
		num[v], low[v] = counter, counter
		stack = append(stack, v)
		onStack[v] = true
		calls = append(calls, frame{v: v})
	}

	for root := 0; root < n; root++ {
		if num[root] != 0 {
			continue
		}
		visit(root)
		for len(calls) > 0 {
			top := len(calls) - 1
			v := calls[top].v
			if i := calls[top].i; i < len(g.succ[v]) {
				calls[top].i++
				w := g.succ[v][i]
				if num[w] == 0 {
					visit(w)
				} else if onStack[w] && num[w] < low[v] {
					low[v] = num[w]
				}
				continue
			}
			// All successors of v are done: "return" from v.
			if low[v] == num[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
			calls = calls[:top]
			if top > 0 {
				if p := calls[top-1].v; low[v] < low[p] {
					low[p] = low[v]
				}
			}
		}
	}
	return comp, ncomp
}
