package lsp

import (
	"os"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/spec"
	"go.lsp.dev/protocol"
)

const wave = `wave "w" {
  on_quota = "wait"
}

repo "app" {
  path = "."
}

agent "fast" {
  model = "x"
}

lot "a" {
  repo  = repo.app
  brief = "Do a."
}

lot "b" {
  repo       = repo.app
  brief      = "Do b."
  depends_on = [lot.a]
  on_conflict = "fix"
}
`

// TestConversation drives a whole session: open, completion, hover,
// definition, references, symbols, formatting, a broken edit, shutdown
// and exit.
func TestConversation(t *testing.T) {
	c := startClient(t, Options{})
	u, diags := c.open("wave.hcl", wave)
	// agent "fast" sets model, which an agent block does not take.
	if len(diags) != 1 || !strings.Contains(diags[0].Message, `Unsupported argument`) || diags[0].Range.Start.Line != 9 {
		t.Fatalf("diagnostics of the opened file: %+v", diags)
	}

	completions := map[string]protocol.Position{
		"top-level":   {Line: 3, Character: 0},
		"lot-body":    at(t, wave, `  brief = "Do a."`, 0),
		"on_conflict": at(t, wave, `"fix"`, 0),
		"depends_on":  at(t, wave, `lot.a]`, 4),
		"repo-ref":    at(t, wave, `repo.app`, 5),
	}
	for name, pos := range completions {
		var list protocol.CompletionList
		c.call(protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: posParams(u, pos)}, &list)
		golden(t, "completion-"+name+".json", labels(list))
	}

	for name, pos := range map[string]protocol.Position{
		"on_quota":   at(t, wave, "on_quota", 2),
		"depends_on": at(t, wave, "depends_on", 2),
		"lot-block":  at(t, wave, `lot "a"`, 1),
	} {
		var h protocol.Hover
		c.call(protocol.MethodTextDocumentHover, posParams(u, pos), &h)
		golden(t, "hover-"+name+".json", h)
	}

	var defs []protocol.Location
	c.call(protocol.MethodTextDocumentDefinition, posParams(u, at(t, wave, "lot.a]", 2)), &defs)
	if len(defs) != 1 || defs[0].URI != u || defs[0].Range.Start.Line != 12 {
		t.Errorf("definition of lot.a: %+v", defs)
	}
	var refs []protocol.Location
	c.call(protocol.MethodTextDocumentReferences, protocol.ReferenceParams{TextDocumentPositionParams: posParams(u, at(t, wave, `repo "app"`, 7))}, &refs)
	if len(refs) != 2 || refs[0].Range.Start.Line != 13 || refs[1].Range.Start.Line != 18 {
		t.Errorf("references of repo.app: %+v", refs)
	}

	var syms []protocol.DocumentSymbol
	c.call(protocol.MethodTextDocumentDocumentSymbol, protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}, &syms)
	var names []string
	for _, s := range syms {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "wave.w repo.app agent.fast lot.a lot.b" {
		t.Errorf("symbols: %s", got)
	}

	var edits []protocol.TextEdit
	c.call(protocol.MethodTextDocumentFormatting, protocol.DocumentFormattingParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}, &edits)
	if len(edits) != 1 || !strings.Contains(edits[0].NewText, "  repo        = repo.app\n  brief       = \"Do b.\"") {
		t.Errorf("formatting: %+v", edits)
	}

	broken := strings.Replace(wave, "depends_on = [lot.a]", "depends_on = [lot.c]", 1)
	diags = c.change(u, 2, broken)
	if len(diags) < 2 || !hasDiag(diags, `no lot named "c"`, 20) {
		t.Errorf("diagnostics after the edit: %+v", diags)
	}
	diags = c.change(u, 3, strings.Replace(wave, "lot \"b\" {", "lot \"b\" {{", 1))
	if len(diags) == 0 || !strings.Contains(diags[0].Message, "Argument or block definition required") {
		t.Errorf("diagnostics of a syntax error: %+v", diags)
	}

	c.call(protocol.MethodShutdown, nil, nil)
	c.notify(protocol.MethodExit, nil)
	if err := <-c.done; err != nil {
		t.Errorf("Serve after shutdown and exit: %v", err)
	}
}

func hasDiag(diags []protocol.Diagnostic, text string, line uint32) bool {
	for _, d := range diags {
		if strings.Contains(d.Message, text) && d.Range.Start.Line == line {
			return true
		}
	}
	return false
}

// item is what a golden file keeps of a completion item.
type item struct {
	Label, Detail, NewText string
	Kind                   protocol.CompletionItemKind
	Doc                    string `json:",omitempty"`
}

func labels(list protocol.CompletionList) []item {
	out := []item{}
	for _, it := range list.Items {
		i := item{Label: it.Label, Detail: it.Detail, Kind: it.Kind}
		if it.TextEdit != nil {
			i.NewText = it.TextEdit.NewText
		}
		if m, ok := it.Documentation.(map[string]any); ok {
			i.Doc, _ = m["value"].(string)
		}
		out = append(out, i)
	}
	return out
}

// TestExamples opens the repository's example waves: no diagnostics but
// those validate gives, symbols for every lot.
func TestExamples(t *testing.T) {
	c := startClient(t, Options{})
	for _, name := range []string{"../../examples/quickstart/wave.hcl", "../../examples/multi-repo/wave.hcl", "../../examples/json-syntax/wave.hcl.json"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		u, diags := c.open(strings.ReplaceAll(strings.TrimPrefix(name, "../../examples/"), "/", "-"), string(src))
		for _, d := range diags {
			if d.Severity == protocol.DiagnosticSeverityError && !strings.Contains(d.Message, "file") {
				t.Errorf("%s: %s", name, d.Message)
			}
		}
		var syms []protocol.DocumentSymbol
		c.call(protocol.MethodTextDocumentDocumentSymbol, protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}, &syms)
		if strings.HasSuffix(name, ".hcl") && len(syms) < 3 {
			t.Errorf("%s: symbols %+v", name, syms)
		}
	}
}

// TestSchemaCoversSpec checks that every attribute spec accepts is in
// the language server's schema with a description, so completion offers
// it and a hover on it is never empty.
func TestSchemaCoversSpec(t *testing.T) {
	s, err := waveSchema(spec.DefaultAgentKinds, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bt := range spec.Schema() {
		b := s.Blocks[bt.Type]
		if b == nil {
			t.Errorf("block %q missing", bt.Type)
			continue
		}
		if len(b.Labels) != len(bt.Labels) {
			t.Errorf("block %q: %d labels, spec has %d", bt.Type, len(b.Labels), len(bt.Labels))
		}
		for _, a := range bt.Attributes {
			as := b.Body.Attributes[a.Name]
			switch {
			case as == nil:
				t.Errorf("%s.%s missing", bt.Type, a.Name)
			case strings.TrimSpace(as.Description.Value) == "":
				t.Errorf("%s.%s has no description", bt.Type, a.Name)
			case as.IsRequired != a.Required:
				t.Errorf("%s.%s required %v, spec says %v", bt.Type, a.Name, as.IsRequired, a.Required)
			}
		}
		if len(b.Body.Attributes) != len(bt.Attributes) {
			t.Errorf("block %q: %d attributes, spec accepts %d", bt.Type, len(b.Body.Attributes), len(bt.Attributes))
		}
	}
}

// TestCRLF opens a wave saved with CRLF line ends: diagnostics and
// definitions point at the same lines and columns as in the LF wave.
func TestCRLF(t *testing.T) {
	c := startClient(t, Options{})
	crlf := strings.ReplaceAll(wave, "\n", "\r\n")
	u, diags := c.open("crlf.hcl", crlf)
	want := protocol.Range{Start: protocol.Position{Line: 9, Character: 2}, End: protocol.Position{Line: 9, Character: 7}}
	if len(diags) != 1 || diags[0].Range != want {
		t.Errorf("diagnostics: %+v, want one on %+v (model)", diags, want)
	}
	var defs []protocol.Location
	c.call(protocol.MethodTextDocumentDefinition, posParams(u, at(t, wave, "lot.a]", 2)), &defs)
	if len(defs) != 1 || defs[0].Range.Start != (protocol.Position{Line: 12, Character: 0}) {
		t.Errorf("definition of lot.a: %+v", defs)
	}
}

// TestCompletionThenDefinition asks for a completion (which collects
// only reference targets) and then, with no other request between, for
// a definition and references (which read reference origins too).
func TestCompletionThenDefinition(t *testing.T) {
	c := startClient(t, Options{})
	u, _ := c.open("wave.hcl", wave)
	var list protocol.CompletionList
	c.call(protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: posParams(u, at(t, wave, "lot.a]", 4))}, &list)
	if len(list.Items) == 0 {
		t.Fatal("no completion of lot references")
	}
	var defs []protocol.Location
	c.call(protocol.MethodTextDocumentDefinition, posParams(u, at(t, wave, "lot.a]", 2)), &defs)
	if len(defs) != 1 || defs[0].Range.Start.Line != 12 {
		t.Errorf("definition of lot.a: %+v", defs)
	}
	c.change(u, 2, wave)
	c.call(protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: posParams(u, at(t, wave, "lot.a]", 4))}, &list)
	var refs []protocol.Location
	c.call(protocol.MethodTextDocumentReferences, protocol.ReferenceParams{TextDocumentPositionParams: posParams(u, at(t, wave, `repo "app"`, 7))}, &refs)
	if len(refs) != 2 {
		t.Errorf("references of repo.app: %+v", refs)
	}
}
