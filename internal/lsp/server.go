// Package lsp is cadence's language server for wave files (cadence lsp):
// the Language Server Protocol over one stream (the editor's stdio), on
// hcl-lang with the wave language's schema from spec. It reads only the
// editor's text of each open file, and what spec's loader reads for
// validate (var files beside the wave, file() and templatefile()
// arguments); it starts no process and never touches git.
package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl-lang/lang"
	"github.com/hashicorp/hcl-lang/reference"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// Options configure a server.
type Options struct {
	// LoadOptions returns the options a wave file is validated with (the
	// CLI passes validate's: its auto-loaded var files, the agent kinds
	// and their adapters' settings decoder, the environment). Nil means
	// spec.Options{}, which leaves agents' own attributes unjudged.
	LoadOptions func(filename string) spec.Options
	// AgentKinds are the values completion offers for an agent's kind;
	// empty means spec.DefaultAgentKinds.
	AgentKinds []string
	// AgentAttributes are the attributes each kind's adapter adds to the
	// agent block, by kind (the CLI passes its agent registry's).
	AgentAttributes map[string][]spec.KindAttribute
}

// server is one LSP session. Requests are handled one at a time, in the
// order they arrive (jsonrpc2's read loop), so documents need no lock.
type server struct {
	conn     jsonrpc2.Conn
	opts     Options
	schema   *schemaSet
	docs     map[protocol.DocumentURI]*document
	snippets bool
	shutdown bool
	exited   bool
}

// Serve runs a server on rwc until the client sends exit or closes the
// stream. It returns nil after shutdown then exit, or when the client
// closes the stream; an error for exit without shutdown (the protocol's
// exit code 1) or a broken stream.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) error {
	kinds := opts.AgentKinds
	if len(kinds) == 0 {
		kinds = spec.DefaultAgentKinds
	}
	body, err := waveSchema(kinds, opts.AgentAttributes)
	if err != nil {
		return err
	}
	s := &server{opts: opts, docs: map[protocol.DocumentURI]*document{}, schema: &schemaSet{body: body, targets: targetSchema(body), builtins: builtinTargets()}}
	s.conn = jsonrpc2.NewConn(tolerant{jsonrpc2.NewStream(rwc)})
	s.conn.Go(ctx, s.handle)
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
		s.conn.Close()
		<-s.conn.Done()
	}
	switch err := s.conn.Err(); {
	case s.exited && !s.shutdown:
		return errors.New("lsp: exit before shutdown")
	case s.exited, err == nil, errors.Is(err, io.EOF), errors.Is(err, io.ErrClosedPipe), ctx.Err() != nil:
		return nil
	default:
		return err
	}
}

// tolerant is a stream that skips a message whose body, read whole, is
// not JSON-RPC (jsonrpc2.DecodeMessage's errors), instead of ending the
// session: one malformed message from the editor must not kill the
// server. A broken frame (a bad header, a short body) still ends it.
type tolerant struct{ jsonrpc2.Stream }

func (t tolerant) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		msg, n, err := t.Stream.Read(ctx)
		if err != nil && (errors.Is(err, jsonrpc2.ErrInvalidRequest) || strings.HasPrefix(err.Error(), "unmarshaling jsonrpc message")) {
			continue
		}
		return msg, n, err
	}
}

// builtinTargets are the reference targets no block declares: the
// built-in agent.
func builtinTargets() reference.Targets {
	return reference.Targets{{
		Addr:        lang.Address{lang.RootStep{Name: "agent"}, lang.AttrStep{Name: spec.BuiltinAgent}},
		ScopeId:     scopeAgent,
		Name:        "agent",
		Description: lang.Markdown("The built-in Claude Code agent."),
	}}
}

func (s *server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	if s.shutdown && req.Method() != protocol.MethodExit {
		return reply(ctx, nil, fmt.Errorf("%w: the server is shut down", jsonrpc2.ErrInvalidRequest))
	}
	switch req.Method() {
	case protocol.MethodInitialize:
		var p protocol.InitializeParams
		if err := decode(req, &p); err != nil {
			return reply(ctx, nil, err)
		}
		if c := p.Capabilities.TextDocument; c != nil && c.Completion != nil && c.Completion.CompletionItem != nil {
			s.snippets = c.Completion.CompletionItem.SnippetSupport
		}
		return reply(ctx, initializeResult(), nil)
	case protocol.MethodShutdown:
		s.shutdown = true
		return reply(ctx, nil, nil)
	case protocol.MethodExit:
		s.exited = true
		_ = reply(ctx, nil, nil)
		return s.conn.Close()
	case protocol.MethodTextDocumentDidOpen:
		var p protocol.DidOpenTextDocumentParams
		if err := decode(req, &p); err != nil {
			return reply(ctx, nil, err)
		}
		s.open(ctx, p.TextDocument.URI, []byte(p.TextDocument.Text), p.TextDocument.Version)
		return reply(ctx, nil, nil)
	case protocol.MethodTextDocumentDidChange:
		var p protocol.DidChangeTextDocumentParams
		if err := decode(req, &p); err != nil {
			return reply(ctx, nil, err)
		}
		// Full sync (initializeResult): the last change is the whole text.
		if n := len(p.ContentChanges); n > 0 {
			s.open(ctx, p.TextDocument.URI, []byte(p.ContentChanges[n-1].Text), p.TextDocument.Version)
		}
		return reply(ctx, nil, nil)
	case protocol.MethodTextDocumentDidClose:
		var p protocol.DidCloseTextDocumentParams
		if err := decode(req, &p); err != nil {
			return reply(ctx, nil, err)
		}
		delete(s.docs, p.TextDocument.URI)
		// The problems of a closed file are the editor's no more.
		return errors.Join(reply(ctx, nil, nil), s.conn.Notify(ctx, protocol.MethodTextDocumentPublishDiagnostics,
			&protocol.PublishDiagnosticsParams{URI: p.TextDocument.URI, Diagnostics: []protocol.Diagnostic{}}))
	case protocol.MethodTextDocumentCompletion:
		return s.positional(ctx, reply, req, s.completion)
	case protocol.MethodTextDocumentHover:
		return s.positional(ctx, reply, req, s.hover)
	case protocol.MethodTextDocumentDefinition:
		return s.positional(ctx, reply, req, s.definition)
	case protocol.MethodTextDocumentReferences:
		var p protocol.ReferenceParams
		if err := decode(req, &p); err != nil {
			return reply(ctx, nil, err)
		}
		d := s.docs[p.TextDocument.URI]
		if d == nil {
			return reply(ctx, nil, nil)
		}
		return reply(ctx, s.references(d, p.Position, p.Context.IncludeDeclaration), nil)
	case protocol.MethodTextDocumentDocumentSymbol:
		return s.whole(ctx, reply, req, s.symbols)
	case protocol.MethodTextDocumentFormatting:
		return s.whole(ctx, reply, req, s.format)
	case protocol.MethodSemanticTokensFull:
		return s.whole(ctx, reply, req, s.semanticTokens)
	case protocol.MethodInitialized, protocol.MethodTextDocumentDidSave, protocol.MethodWorkspaceDidChangeConfiguration, "$/cancelRequest", "$/setTrace":
		return reply(ctx, nil, nil)
	}
	return jsonrpc2.MethodNotFoundHandler(ctx, reply, req)
}

func decode(req jsonrpc2.Request, v any) error {
	if err := json.Unmarshal(req.Params(), v); err != nil {
		return fmt.Errorf("%w: %s: %v", jsonrpc2.ErrInvalidParams, req.Method(), err)
	}
	return nil
}

// positional answers a request on a position of an open document; null
// for a document that is not open.
func (s *server) positional(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request, f func(*document, protocol.Position) any) error {
	var p protocol.TextDocumentPositionParams
	if err := decode(req, &p); err != nil {
		return reply(ctx, nil, err)
	}
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		return reply(ctx, nil, nil)
	}
	return reply(ctx, f(d, p.Position), nil)
}

// whole answers a request on a whole open document.
func (s *server) whole(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request, f func(*document) any) error {
	var p struct {
		TextDocument protocol.TextDocumentIdentifier `json:"textDocument"`
	}
	if err := decode(req, &p); err != nil {
		return reply(ctx, nil, err)
	}
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		return reply(ctx, nil, nil)
	}
	return reply(ctx, f(d), nil)
}

// open records a document's new text and publishes its diagnostics.
func (s *server) open(ctx context.Context, u protocol.DocumentURI, text []byte, version int32) {
	name := string(u)
	if fu, err := uri.Parse(string(u)); err == nil && fu.Filename() != "" {
		name = fu.Filename()
	}
	d := newDocument(u, name, text, version)
	s.docs[u] = d
	_ = s.conn.Notify(ctx, protocol.MethodTextDocumentPublishDiagnostics, &protocol.PublishDiagnosticsParams{
		URI: u, Version: uint32(max(version, 0)), Diagnostics: s.diagnostics(d),
	})
}

func initializeResult() *protocol.InitializeResult {
	return &protocol.InitializeResult{
		ServerInfo: &protocol.ServerInfo{Name: "cadence"},
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync:           &protocol.TextDocumentSyncOptions{OpenClose: true, Change: protocol.TextDocumentSyncKindFull},
			CompletionProvider:         &protocol.CompletionOptions{TriggerCharacters: []string{".", "=", "\"", "["}},
			HoverProvider:              true,
			DefinitionProvider:         true,
			ReferencesProvider:         true,
			DocumentSymbolProvider:     true,
			DocumentFormattingProvider: true,
			SemanticTokensProvider: map[string]any{
				"legend": protocol.SemanticTokensLegend{TokenTypes: tokenTypes, TokenModifiers: []protocol.SemanticTokenModifiers{}},
				"full":   true,
			},
		},
	}
}
