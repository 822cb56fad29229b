package lsp

import (
	"bytes"
	"context"
	"sort"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl-lang/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"go.lsp.dev/protocol"
)

// diagnostics are validate's diagnostics of the document's text: spec's
// loader on the document's parse, no machine checks. One about another
// file (a var file) is put on the document's first character, naming
// that file.
func (s *server) diagnostics(d *document) []protocol.Diagnostic {
	diags := d.parseDiags
	if !diags.HasErrors() {
		var opts spec.Options
		if s.opts.LoadOptions != nil {
			opts = s.opts.LoadOptions(d.filename)
		}
		_, more := d.loader.LoadParsed(d.parsed, d.filename, opts)
		diags = append(diags[:len(diags):len(diags)], more...)
	}
	out := []protocol.Diagnostic{}
	for _, diag := range diags {
		msg := diag.Summary
		if diag.Detail != "" {
			msg += ": " + diag.Detail
		}
		var r protocol.Range
		switch {
		case diag.Subject != nil && diag.Subject.Filename == d.filename:
			r = d.rng(*diag.Subject)
		case diag.Subject != nil:
			msg = diag.Subject.String() + ": " + msg
		}
		sev := protocol.DiagnosticSeverityError
		if diag.Severity == hcl.DiagWarning {
			sev = protocol.DiagnosticSeverityWarning
		}
		out = append(out, protocol.Diagnostic{Range: r, Severity: sev, Source: "cadence", Message: msg})
	}
	return out
}

// maxCandidates is the most candidates hcl-lang returns for a position.
const maxCandidates = 100

var candidateKinds = map[lang.CandidateKind]protocol.CompletionItemKind{
	lang.AttributeCandidateKind: protocol.CompletionItemKindProperty,
	lang.BlockCandidateKind:     protocol.CompletionItemKindClass,
	lang.LabelCandidateKind:     protocol.CompletionItemKindField,
	lang.BoolCandidateKind:      protocol.CompletionItemKindEnumMember,
	lang.StringCandidateKind:    protocol.CompletionItemKindEnumMember,
	lang.NumberCandidateKind:    protocol.CompletionItemKindValue,
	lang.KeywordCandidateKind:   protocol.CompletionItemKindKeyword,
	lang.ReferenceCandidateKind: protocol.CompletionItemKindVariable,
	lang.FunctionCandidateKind:  protocol.CompletionItemKindFunction,
}

// completion lists what may be written at a position: block types,
// attribute names, enum values and references, from hcl-lang.
func (s *server) completion(d *document, p protocol.Position) any {
	list := &protocol.CompletionList{Items: []protocol.CompletionItem{}}
	if d.file == nil {
		return list
	}
	d.pathContext(s.schema, false)
	_, pd, err := d.decoder(s.schema)
	if err != nil {
		return list
	}
	cands, err := pd.CompletionAtPos(context.Background(), d.filename, d.pos(p))
	if err != nil {
		return list
	}
	// hcl-lang cuts a list at maxCandidates without always saying so: a
	// full list is incomplete, for the editor to ask again as the user types
	list.IsIncomplete = !cands.IsComplete || len(cands.List) >= maxCandidates
	for _, c := range cands.List {
		item := protocol.CompletionItem{
			Label: c.Label, Detail: c.Detail, Kind: candidateKinds[c.Kind], SortText: c.SortText, Deprecated: c.IsDeprecated,
			TextEdit: &protocol.TextEdit{Range: d.rng(c.TextEdit.Range), NewText: c.TextEdit.NewText},
		}
		if item.Kind == 0 {
			item.Kind = protocol.CompletionItemKindValue
		}
		if s.snippets && c.TextEdit.Snippet != "" {
			item.TextEdit.NewText, item.InsertTextFormat = c.TextEdit.Snippet, protocol.InsertTextFormatSnippet
		}
		if c.Description.Value != "" {
			item.Documentation = markup(c.Description)
		}
		if c.TriggerSuggest {
			item.Command = &protocol.Command{Title: "Suggest", Command: "editor.action.triggerSuggest"}
		}
		list.Items = append(list.Items, item)
	}
	return list
}

func markup(m lang.MarkupContent) protocol.MarkupContent {
	if m.Kind == lang.MarkdownKind {
		return protocol.MarkupContent{Kind: protocol.Markdown, Value: m.Value}
	}
	return protocol.MarkupContent{Kind: protocol.PlainText, Value: m.Value}
}

// hover describes what is at a position: a block type, an attribute (its
// description and default in docs/wave-file.md), a value or a reference.
func (s *server) hover(d *document, p protocol.Position) any {
	if d.file == nil {
		return nil
	}
	d.pathContext(s.schema, true)
	_, pd, err := d.decoder(s.schema)
	if err != nil {
		return nil
	}
	h, err := pd.HoverAtPos(context.Background(), d.filename, d.pos(p))
	if err != nil || h == nil {
		return nil
	}
	r := d.rng(h.Range)
	return &protocol.Hover{Contents: markup(h.Content), Range: &r}
}

// definition is where the lot, repo, agent, variable or local referenced
// at a position is declared.
func (s *server) definition(d *document, p protocol.Position) any {
	locs := []protocol.Location{}
	if d.file == nil {
		return locs
	}
	d.pathContext(s.schema, true)
	dec, _, err := d.decoder(s.schema)
	if err != nil {
		return locs
	}
	targets, err := dec.ReferenceTargetsForOriginAtPos(d.path(), d.filename, d.pos(p))
	if err != nil {
		return locs
	}
	for _, t := range targets {
		r := t.Range
		if t.DefRangePtr != nil {
			r = *t.DefRangePtr
		}
		locs = append(locs, protocol.Location{URI: d.uri, Range: d.rng(r)})
	}
	return locs
}

// references are the places that reference the lot, repo, agent,
// variable or local declared at a position (with its declaration when
// asked), in file order.
func (s *server) references(d *document, p protocol.Position, declaration bool) []protocol.Location {
	locs := []protocol.Location{}
	if d.file == nil {
		return locs
	}
	ctx := d.pathContext(s.schema, true)
	dec, _, err := d.decoder(s.schema)
	if err != nil {
		return locs
	}
	pos := d.pos(p)
	if declaration {
		if targets, ok := ctx.ReferenceTargets.InnermostAtPos(d.filename, pos); ok {
			for _, t := range targets {
				if t.DefRangePtr != nil {
					locs = append(locs, protocol.Location{URI: d.uri, Range: d.rng(*t.DefRangePtr)})
				}
			}
		}
	}
	for _, o := range dec.ReferenceOriginsTargetingPos(d.path(), d.filename, pos) {
		locs = append(locs, protocol.Location{URI: d.uri, Range: d.rng(o.Range)})
	}
	return locs
}

// symbolKinds are the blocks listed as document symbols.
var symbolKinds = map[string]protocol.SymbolKind{
	"wave": protocol.SymbolKindModule, "lot": protocol.SymbolKindFunction, "repo": protocol.SymbolKindPackage,
	"agent": protocol.SymbolKindClass, "variable": protocol.SymbolKindVariable,
}

// symbols are the wave, its lots, repos, agents and variables, in file
// order, named like references ("lot.api").
func (s *server) symbols(d *document) any {
	out := []protocol.DocumentSymbol{}
	body, ok := bodyOf(d)
	if !ok {
		return out
	}
	for _, b := range body.Blocks {
		kind, ok := symbolKinds[b.Type]
		if !ok || len(b.Labels) == 0 {
			continue
		}
		name := b.Type + "." + b.Labels[0]
		if b.Type == "variable" {
			name = "var." + b.Labels[0]
		}
		out = append(out, protocol.DocumentSymbol{
			Name: name, Kind: kind, Range: d.rng(b.Range()), SelectionRange: d.rng(b.LabelRanges[0]),
		})
	}
	return out
}

func bodyOf(d *document) (*hclsyntax.Body, bool) {
	if d.file == nil {
		return nil, false
	}
	body, ok := d.file.Body.(*hclsyntax.Body)
	return body, ok
}

// format is cadence fmt's rewrite of a native-syntax document, as one
// edit of the whole text; none when it is canonical, has syntax errors
// or is JSON.
func (s *server) format(d *document) any {
	edits := []protocol.TextEdit{}
	if d.file == nil {
		return edits
	}
	if d.parseDiags.HasErrors() {
		return edits
	}
	formatted := hclwrite.Format(d.text)
	if bytes.Equal(formatted, d.text) {
		return edits
	}
	return append(edits, protocol.TextEdit{Range: d.whole(), NewText: string(formatted)})
}

// tokenTypes is the semantic tokens legend: hcl-lang's token types mapped
// to the LSP's standard ones, by their index here.
var tokenTypes = []protocol.SemanticTokenTypes{
	protocol.SemanticTokenType, protocol.SemanticTokenString, protocol.SemanticTokenProperty, protocol.SemanticTokenNumber,
	protocol.SemanticTokenKeyword, protocol.SemanticTokenVariable, protocol.SemanticTokenFunction, protocol.SemanticTokenEnumMember,
}

var tokenIndex = map[lang.SemanticTokenType]uint32{
	lang.TokenBlockType: 0, lang.TokenBlockLabel: 1, lang.TokenAttrName: 2, lang.TokenObjectKey: 2, lang.TokenMapKey: 2,
	lang.TokenString: 1, lang.TokenNumber: 3, lang.TokenBool: 4, lang.TokenKeyword: 4, lang.TokenReferenceStep: 5,
	lang.TokenFunctionName: 6, lang.TokenTypePrimitive: 0, lang.TokenTypeComplex: 0,
}

// semanticTokens are hcl-lang's tokens of the document in the LSP's
// relative encoding; a token over several lines is left out (the LSP
// default forbids them).
func (s *server) semanticTokens(d *document) any {
	out := &protocol.SemanticTokens{Data: []uint32{}}
	if d.file == nil {
		return out
	}
	d.pathContext(s.schema, true)
	_, pd, err := d.decoder(s.schema)
	if err != nil {
		return out
	}
	toks, err := pd.SemanticTokensInFile(context.Background(), d.filename)
	if err != nil {
		return out
	}
	sort.SliceStable(toks, func(i, j int) bool { return toks[i].Range.Start.Byte < toks[j].Range.Start.Byte })
	var line, char uint32
	for _, t := range toks {
		idx, ok := tokenIndex[t.Type]
		start, end := d.position(t.Range.Start.Byte), d.position(t.Range.End.Byte)
		if !ok || start.Line != end.Line || end.Character <= start.Character {
			continue
		}
		dl, dc := start.Line-line, start.Character
		if dl == 0 {
			dc -= char
		}
		out.Data = append(out.Data, dl, dc, end.Character-start.Character, idx, 0)
		line, char = start.Line, start.Character
	}
	return out
}
