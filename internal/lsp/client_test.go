package lsp

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadence-run/cadence/spec"
	"github.com/hashicorp/hcl/v2"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// client is the editor's end of an in-memory LSP session with a server
// run by Serve: real JSON-RPC messages with Content-Length headers.
type client struct {
	t     testing.TB
	conn  jsonrpc2.Conn
	diags chan protocol.PublishDiagnosticsParams
	done  chan error
}

// startClient runs a server on one end of a pipe and returns a client on
// the other, initialized (with snippet support when snippets).
func startClient(t testing.TB, opts Options) *client {
	t.Helper()
	if opts.LoadOptions == nil {
		opts.LoadOptions = func(string) spec.Options { return spec.Options{AgentSettings: commonOnly} }
	}
	srv, cli := net.Pipe()
	c := &client{t: t, diags: make(chan protocol.PublishDiagnosticsParams, 100), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { c.done <- Serve(ctx, srv, opts) }()
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(cli))
	c.conn.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if req.Method() == protocol.MethodTextDocumentPublishDiagnostics {
			var p protocol.PublishDiagnosticsParams
			if err := json.Unmarshal(req.Params(), &p); err != nil {
				t.Errorf("publishDiagnostics: %v", err)
			}
			select {
			case c.diags <- p:
			default:
				t.Errorf("too many diagnostics notifications")
			}
		}
		return reply(ctx, nil, nil)
	})
	t.Cleanup(func() {
		cancel()
		c.conn.Close()
		srv.Close()
	})
	var res protocol.InitializeResult
	c.call(protocol.MethodInitialize, map[string]any{"processId": 0, "capabilities": map[string]any{}}, &res)
	if res.ServerInfo == nil || res.ServerInfo.Name != "cadence" {
		t.Fatalf("initialize: %+v", res)
	}
	c.notify(protocol.MethodInitialized, map[string]any{})
	return c
}

// timeout bounds every exchange of a test.
const timeout = 20 * time.Second

func (c *client) call(method string, params, result any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := c.conn.Call(ctx, method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := c.conn.Notify(ctx, method, params); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// nextDiags waits for the next publishDiagnostics.
func (c *client) nextDiags() protocol.PublishDiagnosticsParams {
	c.t.Helper()
	select {
	case p := <-c.diags:
		return p
	case <-time.After(timeout):
		c.t.Fatal("no diagnostics published")
	}
	return protocol.PublishDiagnosticsParams{}
}

// open opens a document of the given name (under a temp folder) and
// returns its URI and first diagnostics.
func (c *client) open(name, text string) (protocol.DocumentURI, []protocol.Diagnostic) {
	c.t.Helper()
	u := protocol.DocumentURI(uri.File(filepath.Join(c.t.TempDir(), name)))
	c.notify(protocol.MethodTextDocumentDidOpen, protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: u, LanguageID: "hcl", Version: 1, Text: text}})
	p := c.nextDiags()
	if p.URI != u {
		c.t.Fatalf("diagnostics for %s, want %s", p.URI, u)
	}
	return u, p.Diagnostics
}

func (c *client) change(u protocol.DocumentURI, version int32, text string) []protocol.Diagnostic {
	c.t.Helper()
	c.notify(protocol.MethodTextDocumentDidChange, protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: version},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{{Text: text}},
	})
	return c.nextDiags().Diagnostics
}

// at is the position of the first occurrence of mark in text, plus off
// characters (ASCII text).
func at(t testing.TB, text, mark string, off int) protocol.Position {
	t.Helper()
	i := strings.Index(text, mark)
	if i < 0 {
		t.Fatalf("%q not in the text", mark)
	}
	i += off
	line := strings.Count(text[:i], "\n")
	col := i - (strings.LastIndex(text[:i], "\n") + 1)
	return protocol.Position{Line: uint32(line), Character: uint32(col)}
}

func posParams(u protocol.DocumentURI, p protocol.Position) protocol.TextDocumentPositionParams {
	return protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}, Position: p}
}

// golden compares v, as indented JSON, with testdata/name (-update
// rewrites it).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, got)
	}
}

// commonOnly decodes agents' settings as an adapter with none of its own:
// an agent block takes the common attributes only (validate, with the
// CLI's adapters, judges the rest by kind).
func commonOnly(kind string, body hcl.Body, ctx *hcl.EvalContext) (spec.AgentSettings, hcl.Diagnostics) {
	if body == nil {
		return nil, nil
	}
	_, diags := body.Content(&hcl.BodySchema{})
	return nil, diags
}
