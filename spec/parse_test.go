package spec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// tricky has every lexical form the splitter must step over: braces inside
// strings, templates with nested strings, heredocs (with braces and a fake
// end marker), comments of all three kinds, and $${ escapes.
const tricky = `# a comment with { an open brace
wave "w" { budget = "1M" } // and another }
/* a block
   comment with } and "quotes" */
locals {
  s = "a { in a string"
  t = "${upper("nested { }")} and %{ if true }x%{ endif } and $${literal"
  h = <<-EOT
    heredoc { with braces
    EOTX is not the end
    EOT
  list = [
    "x]",
  ]
}
repo "api" {
  path = "."
}
`

func withSmallPieces(t *testing.T) {
	oldMin, oldPiece := chunkedMin, pieceSize
	chunkedMin, pieceSize = 0, 1
	t.Cleanup(func() { chunkedMin, pieceSize = oldMin, oldPiece })
}

func TestSplitTopLevel(t *testing.T) {
	withSmallPieces(t)
	cuts, ok := splitTopLevel([]byte(tricky))
	if !ok {
		t.Fatal("splitter gave up on valid HCL")
	}
	var starts []int
	for _, c := range cuts {
		starts = append(starts, c.pos.Line)
	}
	// Pieces start after each top-level item's last line.
	if fmt.Sprint(starts) != "[1 2 3 5 16]" {
		t.Errorf("cut lines = %v", starts)
	}
	for _, bad := range []string{"a = \"unterminated\n", "x { \n", "}\n", "h = <<EOT\nno end\n", "/* open"} {
		if _, ok := splitTopLevel([]byte(bad)); ok {
			t.Errorf("splitter accepted %q", bad)
		}
	}
}

// TestChunkedParseMatchesWhole checks that the cut-and-join parse yields the
// same blocks, with the same ranges, as hclsyntax on the whole file, and that
// errors fall back to hclsyntax's own diagnostics.
func TestChunkedParseMatchesWhole(t *testing.T) {
	withSmallPieces(t)
	src := []byte(tricky + strings.Repeat("lot \"a\" {\n  run = \"x\"\n}\n", 3))
	whole, wd := hclsyntax.ParseConfig(src, "w.hcl", hcl.InitialPos)
	cut, cd := parseNative(src, "w.hcl")
	if wd.HasErrors() || cd.HasErrors() {
		t.Fatal(wd, cd)
	}
	wb, cb := whole.Body.(*hclsyntax.Body), cut.Body.(*hclsyntax.Body)
	if len(wb.Blocks) != len(cb.Blocks) {
		t.Fatalf("blocks %d vs %d", len(wb.Blocks), len(cb.Blocks))
	}
	for i := range wb.Blocks {
		w, c := wb.Blocks[i], cb.Blocks[i]
		if w.Type != c.Type || !reflect.DeepEqual(w.Labels, c.Labels) || w.Range() != c.Range() {
			t.Errorf("block %d: %s %v %v vs %s %v %v", i, w.Type, w.Labels, w.Range(), c.Type, c.Labels, c.Range())
		}
		for name, a := range w.Body.Attributes {
			if c.Body.Attributes[name] == nil || a.SrcRange != c.Body.Attributes[name].SrcRange {
				t.Errorf("block %d attribute %s: range differs", i, name)
			}
		}
	}
	if wb.SrcRange != cb.SrcRange || wb.EndRange != cb.EndRange {
		t.Errorf("body ranges %v %v vs %v %v", wb.SrcRange, wb.EndRange, cb.SrcRange, cb.EndRange)
	}
	broken := append([]byte(tricky), "lot \"b\" {\n  run = = \"x\"\n}\n"...)
	_, wd = hclsyntax.ParseConfig(broken, "w.hcl", hcl.InitialPos)
	_, cd = parseNative(broken, "w.hcl")
	if wd.Error() != cd.Error() {
		t.Errorf("diagnostics differ:\n%v\n%v", wd, cd)
	}
}

// TestChunkedLoadMatches decodes a generated wave both ways.
func TestChunkedLoadMatches(t *testing.T) {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "lot \"L%d\" {\n  run = \"echo %d\"\n  depends_on = [%s]\n}\n", i, i, map[bool]string{true: "", false: fmt.Sprintf("lot.L%d", i-1)}[i == 0])
	}
	whole, d1 := load(t, b.String(), Options{})
	withSmallPieces(t)
	cut, d2 := load(t, b.String(), Options{})
	if d1.HasErrors() || d2.HasErrors() {
		t.Fatal(d1, d2)
	}
	if len(whole.Lots) != len(cut.Lots) || cut.Lot("L199").DependsOn[0].ID != "L198" || cut.Lot("L150").DeclRange.Start != whole.Lot("L150").DeclRange.Start {
		t.Error("chunked decode differs")
	}
}
