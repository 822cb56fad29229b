package dag

import (
	"errors"
	"slices"
	"testing"
)

func TestCycles(t *testing.T) {
	tests := []struct {
		name  string
		nodes []string
		edges []e
		want  [][]string
	}{
		{name: "empty"},
		{
			name:  "acyclic",
			nodes: []string{"a", "b", "c"},
			edges: []e{{"a", "b"}, {"b", "c"}, {"a", "c"}},
		},
		{
			name:  "self-loop",
			nodes: []string{"a", "b"},
			edges: []e{{"a", "b"}, {"b", "b"}},
			want:  [][]string{{"b", "b"}},
		},
		{
			name:  "two-node cycle",
			nodes: []string{"a", "b"},
			edges: []e{{"b", "a"}, {"a", "b"}},
			want:  [][]string{{"a", "b", "a"}},
		},
		{
			name:  "two disjoint cycles ordered by earliest node",
			nodes: []string{"p", "x", "a", "y", "b", "z"},
			edges: []e{{"z", "x"}, {"x", "y"}, {"y", "z"}, {"b", "a"}, {"a", "b"}, {"p", "x"}},
			want:  [][]string{{"x", "y", "z", "x"}, {"a", "b", "a"}},
		},
		{
			name:  "self-loop and cycle",
			nodes: []string{"a", "b", "c"},
			edges: []e{{"c", "c"}, {"a", "b"}, {"b", "a"}},
			want:  [][]string{{"a", "b", "a"}, {"c", "c"}},
		},
		{
			// start -> a -> b -> c -> d -> b, c -> end, d -> end.
			// The SCC is {b, c, d}; b is its earliest node.
			name:  "cycle inside a larger graph",
			nodes: []string{"start", "a", "b", "c", "d", "end"},
			edges: []e{{"start", "a"}, {"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "b"}, {"c", "end"}, {"d", "end"}},
			want:  [][]string{{"b", "c", "d", "b"}},
		},
		{
			// Cycle discovered from a node that is not the SCC's earliest:
			// the path must still start at the earliest node (m).
			name:  "starts at earliest node of component",
			nodes: []string{"m", "n", "o"},
			edges: []e{{"o", "m"}, {"n", "o"}, {"m", "n"}},
			want:  [][]string{{"m", "n", "o", "m"}},
		},
		{
			// a -> b -> c -> d -> a (long) and a -> e -> a (short).
			name:  "shortest cycle through earliest node",
			nodes: []string{"a", "b", "c", "d", "e"},
			edges: []e{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a"}, {"a", "e"}, {"e", "a"}},
			want:  [][]string{{"a", "e", "a"}},
		},
		{
			// Two equally short cycles: edge creation order decides.
			name:  "tie between equally short cycles",
			nodes: []string{"a", "b", "c"},
			edges: []e{{"a", "c"}, {"a", "b"}, {"b", "a"}, {"c", "a"}},
			want:  [][]string{{"a", "c", "a"}},
		},
		{
			// x is reachable from the cycle but outside its component; it
			// must not disturb the result.
			name:  "bfs restricted to component",
			nodes: []string{"a", "x", "b", "c"},
			edges: []e{{"a", "x"}, {"a", "b"}, {"b", "c"}, {"c", "a"}},
			want:  [][]string{{"a", "b", "c", "a"}},
		},
		{
			name:  "self-loop on earliest node of larger component",
			nodes: []string{"a", "b"},
			edges: []e{{"a", "b"}, {"b", "a"}, {"a", "a"}},
			want:  [][]string{{"a", "a"}},
		},
		{
			name:  "self-loop on later node of larger component",
			nodes: []string{"a", "b"},
			edges: []e{{"b", "b"}, {"a", "b"}, {"b", "a"}},
			want:  [][]string{{"a", "b", "a"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := build(tc.nodes, tc.edges)
			got := g.Cycles()
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("Cycles() = %v, want %v", got, tc.want)
			}
			_, err := g.TopoOrder()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("TopoOrder() error on acyclic graph: %v", err)
				}
				return
			}
			var ce *CycleError[string]
			if !errors.As(err, &ce) {
				t.Fatalf("TopoOrder() error = %v, want *CycleError", err)
			}
			if !slices.EqualFunc(ce.Cycles, tc.want, slices.Equal) {
				t.Errorf("CycleError.Cycles = %v, want %v", ce.Cycles, tc.want)
			}
		})
	}
}

func TestCycleErrorMessage(t *testing.T) {
	tests := []struct {
		cycles [][]string
		want   string
	}{
		{[][]string{{"a", "b", "c", "a"}}, "dependency cycle: a -> b -> c -> a"},
		{[][]string{{"a", "b", "a"}, {"c", "c"}}, "2 dependency cycles: a -> b -> a; c -> c"},
	}
	for _, tc := range tests {
		err := &CycleError[string]{Cycles: tc.cycles}
		if got := err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	ierr := &CycleError[int]{Cycles: [][]int{{1, 2, 1}}}
	if got, want := ierr.Error(), "dependency cycle: 1 -> 2 -> 1"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
