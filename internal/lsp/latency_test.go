package lsp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// bigWave is a wave of n agent lots in one repo, each depending on the
// one before.
func bigWave(n int) string {
	var b strings.Builder
	b.WriteString("wave \"big\" {\n  budget = \"2M\"\n}\n\nrepo \"app\" {\n  path = \".\"\n}\n")
	for i := range n {
		fmt.Fprintf(&b, "\nlot \"l%d\" {\n  repo  = repo.app\n  brief = \"Do part %d.\"\n", i, i)
		if i > 0 {
			fmt.Fprintf(&b, "  depends_on = [lot.l%d]\n", i-1)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// TestLatency1000Lots edits a 1,000-lot wave and asks for a completion of
// lot references in its middle, checking the answers and logging how long
// each took (go test -v -run TestLatency1000Lots). Times are logged,
// never asserted; the figures in bench/README.md are the benchmarks' (bench_test.go).
func TestLatency1000Lots(t *testing.T) {
	c := startClient(t, Options{})
	text := bigWave(1000)
	u, diags := c.open("big.hcl", text)
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %+v", diags[0])
	}
	// a wave this big is parsed in pieces (spec's parseNative): hcl-lang
	// reads the joined body
	var defs []protocol.Location
	c.call(protocol.MethodTextDocumentDefinition, posParams(u, at(t, text, "lot.l499]", 5)), &defs)
	if want := at(t, text, `lot "l499"`, 0); len(defs) != 1 || defs[0].Range.Start != want {
		t.Errorf("definition of lot.l499: %+v, want at %+v", defs, want)
	}
	edited := strings.Replace(text, "depends_on = [lot.l499]", "depends_on = [lot.l499, lot.]", 1)
	start := time.Now()
	diags = c.change(u, 2, edited)
	change := time.Since(start)
	if len(diags) == 0 {
		t.Fatal("no diagnostic for the unfinished reference")
	}
	pos := at(t, edited, "lot.]", 4)
	start = time.Now()
	var list protocol.CompletionList
	c.call(protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: posParams(u, pos)}, &list)
	first := time.Since(start)
	start = time.Now()
	c.call(protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: posParams(u, pos)}, &list)
	again := time.Since(start)
	// hcl-lang offers at most 100 candidates, the list marked incomplete
	// so that the editor asks again as the user types
	if len(list.Items) != 100 || !list.IsIncomplete || list.Items[0].Label != "lot.l0" {
		t.Errorf("%d lot references offered (incomplete %v), want the first 100 of 1000", len(list.Items), list.IsIncomplete)
	}
	t.Logf("1000 lots: diagnostics %v after the edit; completion %v (first after the edit), %v (again)", change.Round(time.Millisecond), first.Round(time.Millisecond), again.Round(time.Millisecond))
}
