// Package fakeapi is a scripted fake of the Anthropic Messages API for
// driving the real Claude Code CLI (`claude -p`) offline in end-to-end
// tests, plus helpers to find the CLI (FindCLI) and to give it an
// environment that points at the fake (CLIEnv).
//
// The server listens on 127.0.0.1 and answers POST /v1/messages (the CLI
// adds ?beta=true) with Server-Sent Events as the real API does:
// message_start, then content_block_start, content_block_delta (text_delta
// or input_json_delta) and content_block_stop for each block, then
// message_delta (stop_reason and usage) and message_stop.
//
// # Scripts and sessions
//
// A request picks its Script by a marker "[[fake:NAME]]" found anywhere in
// its body, normally in the user's prompt (`claude -p "[[fake:NAME]] ..."`);
// the first marker in the body wins. A request with no marker uses the
// script named "" if there is one. The server keeps one play position per
// session (the X-Claude-Code-Session-Id header) and script: each request
// plays the next turn. A session that resumes (`claude --resume ID`) sends
// the same header and the whole history, marker included, so it goes on
// where the previous invocation stopped.
//
// Every request is a new turn, including the CLI's own retries: a script
// that answers one 429 before a text is consumed by the first retry, which
// gets the text. Use Turn.Repeat (Forever) for an error that never ends.
// When a session has played its whole script, further requests get a plain
// text turn "done" with stop_reason end_turn, so the CLI ends.
//
// Non-streaming requests that offer no tools (such as the auto-mode
// classifier) play no turn: they get a JSON message whose text is the side
// answer ("OK" unless SetSide says otherwise). Non-streaming requests with
// tools (the CLI's fallback after in-stream failures) play the next turn as
// a plain JSON message.
//
// Other methods and paths get a 404 not_found_error (the CLI sends a HEAD
// /api/hello preconnect unless CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is
// set). Every request is recorded (see Request). A Server is safe for
// concurrent use.
package fakeapi

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
	url     string
	srv     *http.Server
	scripts map[string]Script
	done    chan struct{}
	close   sync.Once

	mu   sync.Mutex
	pos  map[string]int // session + "\x00" + marker → next turn
	reqs []Request
	side string
	ids  int
}

// Start starts a server with scripts and closes it when the test ends. It
// fails the test when the server cannot listen.
func Start(t testing.TB, scripts map[string]Script) *Server {
	t.Helper()
	s, err := New(scripts)
	if err != nil {
		t.Fatalf("fakeapi: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// New starts a server with scripts on 127.0.0.1 at a free port. The caller
// must Close it.
func New(scripts map[string]Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		url:     "http://" + ln.Addr().String(),
		scripts: make(map[string]Script, len(scripts)),
		done:    make(chan struct{}),
		pos:     map[string]int{},
		side:    "OK",
	}
	for name, sc := range scripts {
		s.scripts[name] = slices.Clone(sc)
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the base URL of the server, for ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.url }

// Close stops the server, ends hanging and delayed turns and closes all
// connections. It may be called more than once.
func (s *Server) Close() {
	s.close.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// SetSide sets the text of the answer to tool-less non-streaming requests
// (the auto-mode classifier), "OK" by default.
func (s *Server) SetSide(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.side = text
}

// SetScript sets (or replaces) the script of marker name, for a scenario
// that knows a script's content (a path made by the program under test)
// only once the server runs. A session already playing it goes on at its
// position.
func (s *Server) SetScript(name string, sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[name] = slices.Clone(sc)
}

var markerRE = regexp.MustCompile(`\[\[fake:([^\]\s"\\]+)\]\]`)

// ServeHTTP answers one request; it is the server's handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{
		Time:      time.Now(),
		Method:    r.Method,
		Path:      r.URL.Path,
		SessionID: r.Header.Get("X-Claude-Code-Session-Id"),
		Header:    r.Header.Clone(),
		Body:      body,
		Turn:      -1,
	}
	var meta struct {
		Model  string            `json:"model"`
		Stream bool              `json:"stream"`
		Tools  []json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(body, &meta)
	rec.Model, rec.Stream = meta.Model, meta.Stream
	if m := markerRE.FindSubmatch(body); m != nil {
		rec.Marker = string(m[1])
	}

	var turn Turn
	s.mu.Lock()
	side := s.side
	script, ok := s.scripts[rec.Marker]
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		rec.Answer = AnswerNotFound
		turn = Turn{Error: &APIError{Status: 404, Message: "fakeapi: no such endpoint: " + r.Method + " " + r.URL.Path}}
	case !rec.Stream && len(meta.Tools) == 0:
		rec.Answer = AnswerSide
		turn = Text(side)
	case !ok:
		rec.Answer = AnswerNoScript
		turn = Turn{Error: &APIError{Status: 400, Type: "invalid_request_error",
			Message: fmt.Sprintf("fakeapi: no script for marker %q (put [[fake:NAME]] in the prompt)", rec.Marker)}}
	default:
		key := rec.SessionID + "\x00" + rec.Marker
		i := s.pos[key]
		if i < len(script) {
			rec.Answer, rec.Turn, turn = AnswerTurn, i, script[i]
			if !turn.Repeat {
				s.pos[key] = i + 1
			}
		} else {
			rec.Answer, turn = AnswerDone, Text("done")
		}
	}
	s.reqs = append(s.reqs, rec)
	idx := len(s.reqs) - 1
	s.mu.Unlock()

	status, abort := s.play(w, r, turn, meta.Model, meta.Stream, body)

	s.mu.Lock()
	s.reqs[idx].Status = status
	s.reqs[idx].Duration = time.Since(rec.Time)
	s.mu.Unlock()
	if abort {
		// Returning normally would let net/http send an empty 200.
		panic(http.ErrAbortHandler)
	}
}

// play writes the answer t and returns the HTTP status sent, or 0 when no
// response was sent; abort means the connection must close without one.
func (s *Server) play(w http.ResponseWriter, r *http.Request, t Turn, model string, stream bool, body []byte) (status int, abort bool) {
	if t.Delay > 0 {
		timer := time.NewTimer(t.Delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return 0, true
		case <-s.done:
			return 0, true
		}
	}
	if t.Hang {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return 0, true
	}
	if t.Drop {
		return 0, !drop(w)
	}
	h := w.Header()
	for k, v := range t.Header {
		h.Set(k, v)
	}
	h.Set("request-id", s.newID("req_fake"))
	e := t.Error
	if e == nil && t.StreamError != nil && !stream {
		e = t.StreamError
	}
	if e != nil {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(e.Status)
		w.Write(e.body())
		return e.Status, false
	}
	msg := s.message(t, model, promptURL(body))
	if !stream {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(msg.json())
		return http.StatusOK, false
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if t.Stall {
		writeStart(w, msg)
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return http.StatusOK, true
	}
	writeSSE(w, msg, t.StreamError)
	return http.StatusOK, false
}

// drop closes the connection under w with a TCP reset. It reports false
// when the connection cannot be taken over (the handler must then abort).
func drop(w http.ResponseWriter) bool {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
	return true
}

// newID returns a fresh id with prefix, unique within the server.
func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_%020d", prefix, s.ids)
}

// Requests returns a copy of every request recorded so far, in arrival
// order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// RequestsFor returns the recorded requests whose marker is marker.
func (s *Server) RequestsFor(marker string) []Request {
	return s.filter(func(r Request) bool { return r.Marker == marker })
}

// RequestsForSession returns the recorded requests of one session (by the
// X-Claude-Code-Session-Id header).
func (s *Server) RequestsForSession(id string) []Request {
	return s.filter(func(r Request) bool { return r.SessionID == id })
}

// Turns returns the recorded requests with marker that played a turn of
// its script or the final "done" (so not side requests).
func (s *Server) Turns(marker string) []Request {
	return s.filter(func(r Request) bool {
		return r.Marker == marker && (r.Answer == AnswerTurn || r.Answer == AnswerDone)
	})
}

func (s *Server) filter(keep func(Request) bool) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
