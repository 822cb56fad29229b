// Package openai is a scripted fake of the OpenAI Responses API for
// driving the real Codex CLI (`codex exec`) offline in end-to-end tests,
// plus helpers to find the CLI (FindCLI) and to give it a CODEX_HOME and
// an environment that point at the fake (CLIEnv).
//
// The server listens on 127.0.0.1 and answers POST /v1/responses with
// Server-Sent Events as the real API does: response.created, then for
// each output item response.output_item.added and
// response.output_item.done, then response.completed with the turn's
// usage (input tokens including cached ones), or response.failed.
//
// A request picks its Script by a marker "[[fake:NAME]]" in its body (the
// prompt; a resumed thread sends its whole history, so the marker too);
// the first marker wins. The server keeps one play position per thread
// (the session-id header) and script: each request plays the next turn.
// When a thread has played its whole script, further requests get a plain
// message "done". Every request is recorded. A Server is safe for
// concurrent use.
package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"
)

// Server is a running fake API.
type Server struct {
	url   string
	srv   *http.Server
	done  chan struct{}
	close sync.Once

	mu      sync.Mutex
	scripts map[string]Script
	pos     map[string]int
	reqs    []Request
	ids     int
}

// Request is one recorded request.
type Request struct {
	Time time.Time
	// Method and Path are the HTTP method and URL path.
	Method, Path string
	// Thread is the session-id header (Codex's thread id).
	Thread string
	Header http.Header
	Body   []byte
	// Marker is the NAME of the first [[fake:NAME]] in the body, or "".
	Marker string
	// Turn is the index of the turn played, -1 for none.
	Turn int
}

// Start starts a server with scripts and closes it when the test ends.
func Start(t testing.TB, scripts map[string]Script) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeapi/openai: %v", err)
	}
	s := &Server{url: "http://" + ln.Addr().String(), done: make(chan struct{}), scripts: map[string]Script{}, pos: map[string]int{}}
	for k, v := range scripts {
		s.scripts[k] = slices.Clone(v)
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	t.Cleanup(s.Close)
	return s
}

// URL is the base URL of the API, for a provider's base_url:
// http://127.0.0.1:PORT/v1.
func (s *Server) URL() string { return s.url + "/v1" }

// Close stops the server, ends hanging turns and closes all connections.
func (s *Server) Close() {
	s.close.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// SetScript sets (or replaces) the script of marker name.
func (s *Server) SetScript(name string, sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[name] = slices.Clone(sc)
}

// Requests returns a copy of every request recorded so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// RequestsFor returns the recorded requests whose marker is marker.
func (s *Server) RequestsFor(marker string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Marker == marker {
			out = append(out, r)
		}
	}
	return out
}

var markerRE = regexp.MustCompile(`\[\[fake:([^\]\s"\\]+)\]\]`)

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Thread: r.Header.Get("session-id"),
		Header: r.Header.Clone(), Body: body, Turn: -1}
	if m := markerRE.FindSubmatch(body); m != nil {
		rec.Marker = string(m[1])
	}
	var turn Turn
	s.mu.Lock()
	sc, ok := s.scripts[rec.Marker]
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/responses":
		turn = HTTPError(404, "not_found", "fakeapi/openai: no such endpoint: "+r.Method+" "+r.URL.Path)
	case !ok:
		turn = HTTPError(400, "invalid_request_error", fmt.Sprintf("fakeapi/openai: no script for marker %q", rec.Marker))
	default:
		key := rec.Thread + "\x00" + rec.Marker
		i := s.pos[key]
		if i < len(sc) {
			turn, rec.Turn = sc[i], i
			if !turn.Repeat {
				s.pos[key] = i + 1
			}
		} else {
			turn = Message("done")
		}
	}
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()
	s.play(w, r, turn)
}

// play writes the answer t.
func (s *Server) play(w http.ResponseWriter, r *http.Request, t Turn) {
	if t.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		panic(http.ErrAbortHandler)
	}
	for k, v := range t.Header {
		w.Header().Set(k, v)
	}
	if t.Error != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Error.Status)
		b, _ := json.Marshal(map[string]any{"error": t.Error.Body})
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	id := s.newID("resp")
	resp := map[string]any{"id": id, "object": "response", "status": "in_progress", "output": []any{}}
	event(w, "response.created", map[string]any{"response": resp})
	if t.Failed != nil {
		f := clone(resp)
		f["status"], f["error"] = "failed", map[string]any{"code": t.Failed.Code, "message": t.Failed.Message}
		event(w, "response.failed", map[string]any{"response": f})
		return
	}
	var items []any
	for i, it := range t.Items {
		item := s.item(it)
		items = append(items, item)
		event(w, "response.output_item.added", map[string]any{"output_index": i, "item": item})
		event(w, "response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	u := DefaultUsage
	if t.Usage != nil {
		u = *t.Usage
	}
	c := clone(resp)
	c["status"], c["output"] = "completed", items
	c["usage"] = map[string]any{"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		"total_tokens": u.Input + u.Output}
	event(w, "response.completed", map[string]any{"response": c})
}

// item is the output item of it, with fresh ids.
func (s *Server) item(it Item) map[string]any {
	if it.Call != "" {
		args, _ := json.Marshal(it.Args)
		return map[string]any{"type": "function_call", "id": s.newID("fc"), "call_id": s.newID("call"),
			"name": it.Call, "arguments": string(args), "status": "completed"}
	}
	return map[string]any{"type": "message", "id": s.newID("msg"), "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": it.Text, "annotations": []any{}}}}
}

func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_%020d", prefix, s.ids)
}

func event(w http.ResponseWriter, typ string, data map[string]any) {
	data["type"] = typ
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func clone(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
