package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// TestHostilePrefixes: every request on every prefix
// of the example wave files, at every few positions: the server answers,
// never dies.
func TestHostilePrefixes(t *testing.T) {
	c := startClient(t, Options{})
	src, err := os.ReadFile("../../examples/multi-repo/wave.hcl")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := c.open("wave.hcl", "")
	deadline := time.Now().Add(90 * time.Second)
	v := int32(1)
	for cut := 0; cut <= len(src) && time.Now().Before(deadline); cut += 7 {
		v++
		text := string(src[:cut])
		c.change(u, v, text)
		d := newDocument(u, "x", []byte(text), v)
		for off := 0; off <= len(text); off += 11 {
			p := d.position(off)
			for _, m := range []string{protocol.MethodTextDocumentHover, protocol.MethodTextDocumentCompletion, protocol.MethodTextDocumentDefinition} {
				var raw json.RawMessage
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				if _, err := c.conn.Call(ctx, m, posParams(u, p), &raw); err != nil && ctx.Err() != nil {
					t.Fatalf("%s at %v of prefix %d: %v", m, p, cut, err)
				}
				cancel()
			}
		}
		var raw json.RawMessage
		c.conn.Call(context.Background(), "textDocument/semanticTokens/full", map[string]any{"textDocument": map[string]any{"uri": u}}, &raw)
		c.conn.Call(context.Background(), protocol.MethodTextDocumentFormatting, map[string]any{"textDocument": map[string]any{"uri": u}}, &raw)
	}
}

// TestMalformedMessage: one message that is
// not JSON-RPC (a framed body that does not parse) must not end the
// server: the next request is still answered.
func TestMalformedMessage(t *testing.T) {
	srv, cli := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), srv, Options{}) }()
	defer cli.Close()
	send := func(body string) {
		if _, err := fmt.Fprintf(cli, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			t.Errorf("write: %v", err)
		}
	}
	r := bufio.NewReader(cli)
	recv := func() string {
		_ = cli.SetReadDeadline(time.Now().Add(10 * time.Second))
		n := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v (the server ended: %v)", err, func() error {
					select {
					case e := <-done:
						return e
					default:
						return nil
					}
				}())
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatalf("read body: %v", err)
		}
		return string(b)
	}
	go func() {
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
		send(`{not json`)
		send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	}()
	if got := recv(); !strings.Contains(got, `"id":1`) {
		t.Fatalf("initialize: %s", got)
	}
	if got := recv(); !strings.Contains(got, `"id":2`) {
		t.Fatalf("shutdown after a malformed message: %s", got)
	}
}
