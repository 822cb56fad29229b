package lsp

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// The benchmarks of a 1,000-lot wave drive a server over JSON-RPC as an
// editor does (go test -run '^$' -bench Lots ./internal/lsp): a didChange
// of the whole text, then the request. ns/op is the time of one answer:
// the diagnostics published after a change, or one completion.

// edits of bigWave(1000) as the user types: unfinished leaves a reference
// half written (a syntax error), valid changes a brief (the whole wave is
// decoded).
var edits = []struct{ name, old, new string }{
	{"unfinished", "depends_on = [lot.l499]", "depends_on = [lot.l499, lot.]"},
	{"valid", `brief = "Do part 499."`, `brief = "Do part 499 now."`},
}

// benchOpen opens bigWave(1000) in a new server.
func benchOpen(b *testing.B) (*client, protocol.DocumentURI, string) {
	b.Helper()
	c := startClient(b, Options{})
	text := bigWave(1000)
	u, diags := c.open("big.hcl", text)
	if len(diags) != 0 {
		b.Fatalf("diagnostics: %+v", diags[0])
	}
	return c, u, text
}

// BenchmarkDiagnosticsAfterEdit1000Lots times a didChange until its
// diagnostics are published; the text alternates between the wave and
// the edit, so that every change is one.
func BenchmarkDiagnosticsAfterEdit1000Lots(b *testing.B) {
	for _, e := range edits {
		b.Run(e.name, func(b *testing.B) {
			c, u, text := benchOpen(b)
			edited := strings.Replace(text, e.old, e.new, 1)
			texts := []string{edited, text}
			b.ResetTimer()
			for i := range b.N {
				diags := c.change(u, int32(i+2), texts[i%2])
				if i%2 == 0 && e.name == "unfinished" && len(diags) == 0 {
					b.Fatal("no diagnostic for the unfinished reference")
				}
			}
		})
	}
}

// BenchmarkCompletionAfterEdit1000Lots times the first completion of lot
// references after a change (the change and its diagnostics untimed).
func BenchmarkCompletionAfterEdit1000Lots(b *testing.B) {
	c, u, text := benchOpen(b)
	edited := strings.Replace(text, "depends_on = [lot.l499]", "depends_on = [lot.l499, lot.]", 1)
	pos := at(b, edited, "lot.]", 4)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		// alternate spacing so that each change is one, the position kept
		c.change(u, int32(i+2), strings.Replace(edited, "budget = ", []string{"budget =  ", "budget = "}[i%2], 1))
		b.StartTimer()
		benchComplete(b, c, u, pos)
	}
}

// BenchmarkCompletion1000Lots times a completion of lot references asked
// again with no change in between.
func BenchmarkCompletion1000Lots(b *testing.B) {
	c, u, text := benchOpen(b)
	edited := strings.Replace(text, "depends_on = [lot.l499]", "depends_on = [lot.l499, lot.]", 1)
	c.change(u, 2, edited)
	pos := at(b, edited, "lot.]", 4)
	benchComplete(b, c, u, pos)
	b.ResetTimer()
	for range b.N {
		benchComplete(b, c, u, pos)
	}
}

// benchComplete asks for a completion at pos and checks it lists lot
// references.
func benchComplete(b *testing.B, c *client, u protocol.DocumentURI, pos protocol.Position) {
	b.Helper()
	var list protocol.CompletionList
	c.call(protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: posParams(u, pos)}, &list)
	if len(list.Items) != maxCandidates || list.Items[0].Label != "lot.l0" {
		b.Fatalf("%d items offered, want the first %d lot references", len(list.Items), maxCandidates)
	}
}
