package spec

import (
	"fmt"
	"strings"
	"testing"
)

// cycleWave is a wave of n lots l0 … l(n-1), each depending on the next
// and the last on the first: one cycle of n edges.
func cycleWave(n int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		fmt.Fprintf(&b, "lot \"l%d\" {\n  run = \"true\"\n  depends_on = [lot.l%d]\n}\n", i, (i+1)%n)
	}
	return b.String()
}

// TestCycleDescriptionBounded: a long cycle's diagnostic names its first
// maxCycleEdges edges and says how many more there are.
func TestCycleDescriptionBounded(t *testing.T) {
	_, diags := load(t, cycleWave(500), Options{})
	var detail string
	for _, d := range diags {
		if d.Summary == "Dependency cycle" {
			detail = d.Detail
		}
	}
	if detail == "" {
		t.Fatalf("no cycle diagnostic: %v", diags)
	}
	if got := strings.Count(detail, " depends on "); got != maxCycleEdges {
		t.Errorf("%d edges described, want %d:\n%s", got, maxCycleEdges, detail)
	}
	if want := fmt.Sprintf("and %d more edges", 500-maxCycleEdges); !strings.Contains(detail, want) {
		t.Errorf("detail does not say %q:\n%s", want, detail)
	}
	if !strings.Contains(detail, "a cycle of 500 lots") {
		t.Errorf("detail does not say the cycle's length:\n%s", detail)
	}
	if len(detail) > 4000 {
		t.Errorf("detail of %d bytes:\n%s", len(detail), detail)
	}
	// a short cycle is described whole
	_, diags = load(t, cycleWave(3), Options{})
	for _, d := range diags {
		if d.Summary == "Dependency cycle" && (strings.Contains(d.Detail, "more edges") || strings.Count(d.Detail, " depends on ") != 3) {
			t.Errorf("a 3-lot cycle: %s", d.Detail)
		}
	}
}
