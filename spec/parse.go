package spec

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// parseNative parses HCL native syntax. hclsyntax lexes a whole file into one
// token slice, which for a wave of thousands of lots costs hundreds of
// megabytes and most of the run. So a big file is cut at its top-level items
// (found by splitTopLevel) and the pieces are parsed separately, in parallel,
// each with its true start position, then joined into one body. When the
// cutting is unsure, or any piece has an error, the whole file is parsed the
// ordinary way, so diagnostics are always hclsyntax's own.
func parseNative(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	if len(src) < chunkedMin {
		return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	}
	cuts, ok := splitTopLevel(src)
	if !ok || len(cuts) < 2 {
		return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	}
	bodies := make([]*hclsyntax.Body, len(cuts))
	// failed stops the workers at the first piece with an error: the
	// whole file is parsed then, and the other pieces' parses are unused.
	var failed atomic.Bool
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), 4)
	next := make(chan int, len(cuts))
	for i := range cuts {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if failed.Load() {
					return
				}
				c := cuts[i]
				f, diags := hclsyntax.ParseConfig(src[c.start:c.end], filename, c.pos)
				if diags.HasErrors() {
					failed.Store(true)
					return
				}
				bodies[i] = f.Body.(*hclsyntax.Body)
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	}
	end := endPos(src)
	body := &hclsyntax.Body{
		Attributes: hclsyntax.Attributes{},
		SrcRange:   hcl.Range{Filename: filename, Start: hcl.InitialPos, End: end},
		EndRange:   hcl.Range{Filename: filename, Start: end, End: end},
	}
	for _, b := range bodies {
		body.Blocks = append(body.Blocks, b.Blocks...)
		for name, a := range b.Attributes {
			if _, dup := body.Attributes[name]; dup {
				// Let the ordinary parser report the duplicate.
				return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
			}
			body.Attributes[name] = a
		}
	}
	return &hcl.File{Body: body, Bytes: src}, nil
}

// chunkedMin is the size from which cutting a file pays; pieceSize the least
// size of a piece. Variables so that tests can make them small.
var chunkedMin, pieceSize = 64 << 10, 16 << 10

// cut is one piece of a file: bytes [start, end) beginning at pos.
type cut struct {
	start, end int
	pos        hcl.Pos
}

func endPos(src []byte) hcl.Pos {
	line := bytes.Count(src, []byte("\n")) + 1
	col := len(src) - bytes.LastIndexByte(src, '\n')
	return hcl.Pos{Line: line, Column: col, Byte: len(src)}
}

// splitTopLevel cuts src at the starts of lines where no bracket, string,
// heredoc or comment is open, grouping lines into pieces of at least
// pieceSize bytes. It understands enough of HCL's lexical syntax to know
// when it is outside everything: quoted strings with escapes and ${ } / %{ }
// templates (which nest), heredocs (<<EOT and <<-EOT), and #, // and /* */
// comments. Anything it does not expect makes it give up (ok=false).
func splitTopLevel(src []byte) ([]cut, bool) {
	var cuts []cut
	depth := 0       // open brackets outside strings
	var stack []byte // what is open inside strings: '"' string, '{' template
	line, start, startLine := 1, 0, 1
	i, n := 0, len(src)
	for i < n {
		c := src[i]
		if len(stack) > 0 && stack[len(stack)-1] == '"' {
			switch {
			case c == '\\':
				i += 2
				continue
			case c == '"':
				stack = stack[:len(stack)-1]
			case (c == '$' || c == '%') && i+2 < n && src[i+1] == c && src[i+2] == '{':
				i += 3 // $${ and %%{ are literals
				continue
			case (c == '$' || c == '%') && i+1 < n && src[i+1] == '{':
				stack = append(stack, '{')
				i += 2
				continue
			case c == '\n':
				return nil, false // strings do not span lines
			}
			i++
			continue
		}
		switch c {
		case '"':
			stack = append(stack, '"')
		case '{', '[', '(':
			if len(stack) > 0 {
				stack = append(stack, c)
			} else {
				depth++
			}
		case '}', ']', ')':
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				if top == '{' && c != '}' || top == '[' && c != ']' || top == '(' && c != ')' {
					return nil, false
				}
				stack = stack[:len(stack)-1]
			} else if depth--; depth < 0 {
				return nil, false
			}
		case '#':
			i = skipLine(src, i)
			continue
		case '/':
			if i+1 < n && src[i+1] == '/' {
				i = skipLine(src, i)
				continue
			}
			if i+1 < n && src[i+1] == '*' {
				j := bytes.Index(src[i+2:], []byte("*/"))
				if j < 0 {
					return nil, false
				}
				line += bytes.Count(src[i:i+2+j+2], []byte("\n"))
				i += 2 + j + 2
				continue
			}
		case '<':
			if i+1 < n && src[i+1] == '<' {
				j, lines, ok := skipHeredoc(src, i)
				if !ok {
					return nil, false
				}
				i, line = j, line+lines
				continue
			}
		case '\n':
			line++
			if depth == 0 && len(stack) == 0 && i+1-start >= pieceSize {
				cuts = append(cuts, cut{start, i + 1, hcl.Pos{Line: startLine, Column: 1, Byte: start}})
				start, startLine = i+1, line
			}
		}
		i++
	}
	if depth != 0 || len(stack) != 0 {
		return nil, false
	}
	if start < n {
		cuts = append(cuts, cut{start, n, hcl.Pos{Line: startLine, Column: 1, Byte: start}})
	}
	return cuts, true
}

// skipLine returns the index of the newline ending the line at i (or n).
func skipLine(src []byte, i int) int {
	if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(src)
}

// skipHeredoc skips a heredoc starting at the "<<" at i: the marker line,
// then lines up to one that is the marker alone (indented for <<-). It
// returns the index of the newline after the closing marker and the newlines
// skipped before it.
func skipHeredoc(src []byte, i int) (int, int, bool) {
	j := i + 2
	if j < len(src) && src[j] == '-' {
		j++
	}
	k := j
	for k < len(src) && (isIdentByte(src[k])) {
		k++
	}
	if k == j || k >= len(src) || src[k] != '\n' {
		return 0, 0, false
	}
	marker := src[j:k]
	lines := 0
	pos := k
	for pos < len(src) {
		// pos is at a newline: look at the next line.
		lines++
		lineStart := pos + 1
		lineEnd := skipLine(src, lineStart)
		if bytes.Equal(bytes.TrimSpace(src[lineStart:lineEnd]), marker) {
			return lineEnd, lines, true
		}
		pos = lineEnd
	}
	return 0, 0, false
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
