package dag

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomDAG builds a DAG of n string-keyed nodes where each node depends on
// up to maxDeps random earlier nodes (duplicates collapse), using a fixed seed.
func randomDAG(n, maxDeps int, seed uint64) *Graph[string] {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	keys := make([]string, n)
	g := New[string](n)
	for i := range keys {
		keys[i] = fmt.Sprintf("lot-%05d", i)
		g.Add(keys[i])
		if i == 0 {
			continue
		}
		for range maxDeps {
			g.Connect(keys[r.IntN(i)], keys[i])
		}
	}
	return g
}

const benchNodes = 10_000

func BenchmarkBuild10k(b *testing.B) {
	for b.Loop() {
		randomDAG(benchNodes, 3, 1)
	}
}

func BenchmarkTopoOrder10k(b *testing.B) {
	g := randomDAG(benchNodes, 3, 1)
	for b.Loop() {
		if _, err := g.TopoOrder(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.EdgeCount()), "edges")
}

func BenchmarkLongestPaths10k(b *testing.B) {
	g := randomDAG(benchNodes, 3, 1)
	w := func(string) float64 { return 1 }
	for b.Loop() {
		if _, err := g.LongestPaths(w); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCriticalPath10k(b *testing.B) {
	g := randomDAG(benchNodes, 3, 1)
	w := func(string) float64 { return 1 }
	for b.Loop() {
		if _, _, err := g.CriticalPath(w); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCycles10k(b *testing.B) {
	g := randomDAG(benchNodes, 3, 1)
	for b.Loop() {
		if c := g.Cycles(); c != nil {
			b.Fatal("unexpected cycle")
		}
	}
}

func BenchmarkAncestors10k(b *testing.B) {
	g := randomDAG(benchNodes, 3, 1)
	last := g.Nodes()[benchNodes-1]
	for b.Loop() {
		g.Ancestors(last)
	}
}
