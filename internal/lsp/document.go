package lsp

import (
	"bytes"
	"context"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl-lang/decoder"
	"github.com/hashicorp/hcl-lang/lang"
	"github.com/hashicorp/hcl-lang/reference"
	"github.com/hashicorp/hcl-lang/schema"
	"github.com/hashicorp/hcl/v2"
	"go.lsp.dev/protocol"
)

// document is one open wave file: the editor's text (never the file on
// disk), parsed once per change by spec's loader, whose parse both
// hcl-lang and the diagnostics read.
type document struct {
	uri      protocol.DocumentURI
	filename string
	// text is the editor's text, as sent; src the source that was parsed:
	// text with CRLF line ends read as LF (spec's Loader.Parse). Lines and
	// columns are the same in both, so LSP positions map through src.
	text    []byte
	src     []byte
	version int32
	// lines are the byte offsets of each line's start in src.
	lines []int
	// loader parsed src as parsed, with parseDiags; LoadParsed decodes it
	// for the diagnostics.
	loader     *spec.Loader
	parsed     *hcl.File
	parseDiags hcl.Diagnostics
	// file is parsed when it is native syntax (nil for a *.hcl.json file,
	// which gets diagnostics and symbols only); ctx its hcl-lang path
	// context, nil until a feature needs it; origins whether ctx has its
	// reference origins.
	file    *hcl.File
	ctx     *decoder.PathContext
	origins bool
}

func newDocument(uri protocol.DocumentURI, filename string, text []byte, version int32) *document {
	d := &document{uri: uri, filename: filename, text: text, src: text, version: version, loader: spec.NewLoader()}
	d.parsed, d.parseDiags = d.loader.Parse(text, filename)
	if d.parsed != nil && d.parsed.Bytes != nil {
		d.src = d.parsed.Bytes
	}
	if !spec.IsJSON(filename) {
		d.file = d.parsed
	}
	d.lines = append(make([]int, 0, bytes.Count(d.src, []byte("\n"))+1), 0)
	for i, c := range d.src {
		if c == '\n' {
			d.lines = append(d.lines, i+1)
		}
	}
	return d
}

// path is the document's hcl-lang path: every wave file stands alone.
func (d *document) path() lang.Path {
	return lang.Path{Path: string(d.uri), LanguageID: "cadence"}
}

// pathContext returns the document's hcl-lang context, collecting its
// reference targets the first time after a change and, when origins, its
// reference origins the first time they are asked for: hover, definition,
// references and semantic tokens read origins; completion reads only
// targets, so the first completion after a change does not collect them.
func (d *document) pathContext(s *schemaSet, origins bool) *decoder.PathContext {
	if d.ctx == nil {
		d.ctx = &decoder.PathContext{Schema: s.body, Files: map[string]*hcl.File{}}
		if d.file == nil {
			d.origins = true
			return d.ctx
		}
		d.ctx.Files[d.filename] = d.file
		view := &decoder.PathContext{Schema: s.targets, Files: d.ctx.Files}
		pd, err := decoder.NewDecoder(fixed{d.path(), view}).Path(d.path())
		if err != nil {
			d.origins = true
			return d.ctx
		}
		targets, _ := pd.CollectReferenceTargets()
		d.ctx.ReferenceTargets = append(targets, s.builtins...)
	}
	if origins && !d.origins {
		d.origins = true
		if pd, err := decoder.NewDecoder(single{d, s}).Path(d.path()); err == nil {
			d.ctx.ReferenceOrigins, _ = pd.CollectReferenceOrigins()
		}
	}
	return d.ctx
}

// decoder returns an hcl-lang path decoder of the document.
func (d *document) decoder(s *schemaSet) (*decoder.Decoder, *decoder.PathDecoder, error) {
	dec := decoder.NewDecoder(single{d, s})
	pd, err := dec.Path(d.path())
	return dec, pd, err
}

// single is the hcl-lang path reader of one document.
type single struct {
	d *document
	s *schemaSet
}

func (r single) Paths(context.Context) []lang.Path { return []lang.Path{r.d.path()} }

func (r single) PathContext(lang.Path) (*decoder.PathContext, error) {
	return r.d.pathContext(r.s, false), nil
}

// fixed is an hcl-lang path reader of one path with a given context.
type fixed struct {
	path lang.Path
	ctx  *decoder.PathContext
}

func (r fixed) Paths(context.Context) []lang.Path { return []lang.Path{r.path} }

func (r fixed) PathContext(lang.Path) (*decoder.PathContext, error) { return r.ctx, nil }

// offset returns the byte offset in src of an LSP position (a 0-based line and
// a character in UTF-16 code units), clamped to the line's end.
func (d *document) offset(p protocol.Position) int {
	line := int(p.Line)
	if line >= len(d.lines) {
		return len(d.src)
	}
	off, units := d.lines[line], 0
	for off < len(d.src) && d.src[off] != '\n' && units < int(p.Character) {
		r, n := utf8.DecodeRune(d.src[off:])
		units += utf16.RuneLen(r)
		if units > int(p.Character) {
			break
		}
		off += n
	}
	return off
}

// pos returns the hcl.Pos of an LSP position.
func (d *document) pos(p protocol.Position) hcl.Pos {
	off := d.offset(p)
	line := min(int(p.Line), len(d.lines)-1)
	return hcl.Pos{Line: line + 1, Column: utf8.RuneCount(d.src[d.lines[line]:off]) + 1, Byte: off}
}

// position returns the LSP position of a byte offset in src.
func (d *document) position(off int) protocol.Position {
	off = max(0, min(off, len(d.src)))
	line := 0
	lo, hi := 0, len(d.lines)-1
	for lo <= hi {
		m := (lo + hi) / 2
		if d.lines[m] <= off {
			line, lo = m, m+1
		} else {
			hi = m - 1
		}
	}
	units := 0
	for _, r := range string(d.src[d.lines[line]:off]) {
		units += utf16.RuneLen(r)
	}
	return protocol.Position{Line: uint32(line), Character: uint32(units)}
}

// rng returns the LSP range of an hcl.Range of this document.
func (d *document) rng(r hcl.Range) protocol.Range {
	return protocol.Range{Start: d.position(r.Start.Byte), End: d.position(r.End.Byte)}
}

// whole is the range of the whole document.
func (d *document) whole() protocol.Range {
	return protocol.Range{Start: protocol.Position{}, End: d.position(len(d.src))}
}

// schemaSet is the schema every document is read with, its view for
// collecting reference targets (targetSchema), and the reference targets
// no block declares (the built-in agent.claude).
type schemaSet struct {
	body     *schema.BodySchema
	targets  *schema.BodySchema
	builtins reference.Targets
}
