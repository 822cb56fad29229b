package fakeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// event is one Server-Sent Event.
type event struct {
	Name string
	Data map[string]any
}

// post sends a Messages request for marker in session and returns the
// response (body unread).
func post(t *testing.T, ctx context.Context, srv *Server, session, marker string, stream bool, tools bool) (*http.Response, error) {
	t.Helper()
	body := map[string]any{
		"model":    "claude-test",
		"stream":   stream,
		"messages": []any{map[string]any{"role": "user", "content": "[[fake:" + marker + "]] hi"}},
	}
	if tools {
		body["tools"] = []any{map[string]any{"name": "Bash"}}
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/v1/messages?beta=true", strings.NewReader(string(b)))
	req.Header.Set("X-Claude-Code-Session-Id", session)
	return http.DefaultClient.Do(req)
}

// events reads a whole SSE stream.
func events(t *testing.T, resp *http.Response) []event {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var out []event
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if d["type"] != name {
				t.Errorf("event %q has data type %v", name, d["type"])
			}
			out = append(out, event{name, d})
		}
	}
	return out
}

// stream posts a streaming request and returns its events.
func stream(t *testing.T, srv *Server, session, marker string) []event {
	t.Helper()
	resp, err := post(t, context.Background(), srv, session, marker, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return events(t, resp)
}

// assembled is a streamed message put back together.
type assembled struct {
	Names      []string
	Blocks     []map[string]any // text or tool_use, input as a JSON string
	StopReason string
	Usage      map[string]any
}

func assemble(t *testing.T, evs []event) assembled {
	t.Helper()
	var a assembled
	for _, e := range evs {
		a.Names = append(a.Names, e.Name)
		switch e.Name {
		case "content_block_start":
			a.Blocks = append(a.Blocks, e.Data["content_block"].(map[string]any))
			a.Blocks[len(a.Blocks)-1]["partial"] = ""
		case "content_block_delta":
			b := a.Blocks[int(e.Data["index"].(float64))]
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				b["text"] = b["text"].(string) + d["text"].(string)
			case "input_json_delta":
				b["partial"] = b["partial"].(string) + d["partial_json"].(string)
			}
		case "message_delta":
			a.StopReason = e.Data["delta"].(map[string]any)["stop_reason"].(string)
			a.Usage = e.Data["usage"].(map[string]any)
		}
	}
	return a
}

func TestStreamBlocks(t *testing.T) {
	long := strings.Repeat("é€x", 40)
	srv := Start(t, map[string]Script{"m": {
		Blocks(TextBlock(long), ToolBlock("Bash", map[string]string{"command": "ls"}), ToolBlock("Write", map[string]string{"file_path": "/x", "content": long})),
		Text("bye").WithUsage(Usage{InputTokens: 7, OutputTokens: 8, CacheCreationInputTokens: 9, CacheReadInputTokens: 10}),
	}})
	a := assemble(t, stream(t, srv, "s1", "m"))
	want := "message_start content_block_start content_block_delta content_block_delta"
	if got := strings.Join(a.Names, " "); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "content_block_stop message_delta message_stop") {
		t.Errorf("events: %s", got)
	}
	if len(a.Blocks) != 3 || a.Blocks[0]["text"] != long || a.StopReason != "tool_use" {
		t.Fatalf("blocks %v stop %q", a.Blocks, a.StopReason)
	}
	if a.Blocks[1]["partial"] != `{"command":"ls"}` || a.Blocks[1]["name"] != "Bash" {
		t.Errorf("tool block %v", a.Blocks[1])
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(a.Blocks[2]["partial"].(string)), &in); err != nil || in["content"] != long {
		t.Errorf("write input %q: %v", a.Blocks[2]["partial"], err)
	}
	if a.Blocks[1]["id"] == a.Blocks[2]["id"] || !strings.HasPrefix(a.Blocks[1]["id"].(string), "toolu_") {
		t.Errorf("tool ids %v %v", a.Blocks[1]["id"], a.Blocks[2]["id"])
	}
	if a.Usage["input_tokens"] != 100.0 || a.Usage["output_tokens"] != 20.0 {
		t.Errorf("default usage %v", a.Usage)
	}
	b := assemble(t, stream(t, srv, "s1", "m"))
	if b.StopReason != "end_turn" || b.Blocks[0]["text"] != "bye" {
		t.Errorf("turn 2: %+v", b)
	}
	if fmt.Sprint(b.Usage) != "map[cache_creation_input_tokens:9 cache_read_input_tokens:10 input_tokens:7 output_tokens:8]" {
		t.Errorf("usage %v", b.Usage)
	}
	c := assemble(t, stream(t, srv, "s1", "m"))
	if c.Blocks[0]["text"] != "done" || c.StopReason != "end_turn" {
		t.Errorf("after the script: %+v", c)
	}
	reqs := srv.RequestsFor("m")
	if len(reqs) != 3 || reqs[0].Turn != 0 || reqs[1].Turn != 1 || reqs[2].Turn != -1 || reqs[2].Answer != AnswerDone {
		t.Errorf("recorded %+v", reqs)
	}
	if reqs[0].SessionID != "s1" || reqs[0].Model != "claude-test" || !reqs[0].Stream || reqs[0].Status != 200 {
		t.Errorf("recorded %+v", reqs[0])
	}
}

func TestSessionsAndRepeat(t *testing.T) {
	srv := Start(t, map[string]Script{
		"a": {Text("a1"), Text("a2")},
		"r": {RateLimited("1").Forever()},
	})
	for _, s := range []string{"x", "y", "x", "y"} {
		stream(t, srv, s, "a")
	}
	for _, s := range []string{"x", "y"} {
		var got []string
		for _, r := range srv.RequestsForSession(s) {
			got = append(got, fmt.Sprint(r.Turn))
		}
		if strings.Join(got, ",") != "0,1" {
			t.Errorf("session %s played %v", s, got)
		}
	}
	for range 3 {
		resp, err := post(t, context.Background(), srv, "x", "r", true, true)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" ||
			string(b) != `{"error":{"message":"Number of request tokens has exceeded your per-minute rate limit","type":"rate_limit_error"},"type":"error"}` {
			t.Errorf("status %d headers %v body %s", resp.StatusCode, resp.Header, b)
		}
	}
	if n := len(srv.Turns("r")); n != 3 {
		t.Errorf("%d turns of r", n)
	}
}

func TestNonStreamAndNoScript(t *testing.T) {
	srv := Start(t, map[string]Script{"m": {Bash("ls")}, "": {Text("default")}})
	get := func(marker string, stream, tools bool) (int, map[string]any) {
		resp, err := post(t, context.Background(), srv, "s", marker, stream, tools)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if st, m := get("m", false, false); st != 200 || fmt.Sprint(m["content"]) != "[map[text:OK type:text]]" {
		t.Errorf("side: %d %v", st, m)
	}
	srv.SetSide("<block>no</block>")
	if _, m := get("m", false, false); fmt.Sprint(m["content"]) != "[map[text:<block>no</block> type:text]]" {
		t.Errorf("side: %v", m)
	}
	if st, m := get("m", false, true); st != 200 || m["stop_reason"] != "tool_use" || !strings.Contains(fmt.Sprint(m["content"]), "command:ls") {
		t.Errorf("non-stream turn: %d %v", st, m)
	}
	if st, m := get("nope", true, true); st != 400 || !strings.Contains(fmt.Sprint(m), "no script") {
		t.Errorf("unknown marker: %d %v", st, m)
	}
	// No marker at all: the "" script.
	req, _ := http.NewRequest("POST", srv.URL()+"/v1/messages", strings.NewReader(`{"stream":true,"messages":[]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if a := assemble(t, events(t, resp)); a.Blocks[0]["text"] != "default" {
		t.Errorf("default script: %+v", a)
	}
	resp, err = http.Get(srv.URL() + "/v1/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("other path: %d", resp.StatusCode)
	}
	var answers []string
	for _, r := range srv.Requests() {
		answers = append(answers, string(r.Answer))
	}
	if got := strings.Join(answers, " "); got != "side side turn no-script turn not-found" {
		t.Errorf("answers: %s", got)
	}
}

func TestStreamError(t *testing.T) {
	srv := Start(t, map[string]Script{"m": {{StreamError: &APIError{Status: 529}}}})
	evs := stream(t, srv, "s", "m")
	if len(evs) != 2 || evs[1].Name != "error" || fmt.Sprint(evs[1].Data["error"]) != "map[message:fakeapi: scripted 529 overloaded_error type:overloaded_error]" {
		t.Errorf("events %+v", evs)
	}
}

func TestDropHangDelay(t *testing.T) {
	srv := Start(t, map[string]Script{"m": {Drop(), Hang(), Text("late").WithDelay(300 * time.Millisecond), Hang()}})
	if resp, err := post(t, context.Background(), srv, "s", "m", true, true); err == nil {
		resp.Body.Close()
		t.Fatalf("drop: got status %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := post(t, ctx, srv, "s", "m", true, true); err == nil {
		t.Fatal("hang: got a response")
	}
	start := time.Now()
	if a := assemble(t, stream(t, srv, "s", "m")); a.Blocks[0]["text"] != "late" || time.Since(start) < 300*time.Millisecond {
		t.Errorf("delay: %+v after %v", a, time.Since(start))
	}
	// A hang ends when the server closes.
	errc := make(chan error, 1)
	go func() {
		resp, err := post(t, context.Background(), srv, "s", "m", true, true)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for len(srv.Requests()) < 4 {
		time.Sleep(10 * time.Millisecond)
	}
	srv.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("hang after Close: got a response")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hang survived Close")
	}
	time.Sleep(50 * time.Millisecond)
	for i, r := range srv.Requests() {
		if want := []int{0, 0, 200, 0}[i]; r.Status != want || r.Turn != i {
			t.Errorf("request %d: status %d turn %d", i, r.Status, r.Turn)
		}
	}
}

func TestConcurrent(t *testing.T) {
	srv := Start(t, map[string]Script{"m": {Text("1"), Text("2"), Text("3")}})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 4 {
				stream(t, srv, fmt.Sprint("s", i), "m")
				_ = srv.Requests()
			}
		})
	}
	wg.Wait()
	for i := range 8 {
		var got []int
		for _, r := range srv.RequestsForSession(fmt.Sprint("s", i)) {
			got = append(got, r.Turn)
		}
		if fmt.Sprint(got) != "[0 1 2 -1]" {
			t.Errorf("session %d: %v", i, got)
		}
	}
}

func TestToolResults(t *testing.T) {
	r := Request{Body: []byte(`{"messages":[{"role":"user","content":"hi"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"out"},
		 {"type":"tool_result","tool_use_id":"t2","is_error":true,"content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}},{"type":"text","text":"b"}]}]}],
		"tools":[{"name":"Bash"},{"name":"Write"}]}`)}
	got := r.ToolResults()
	if fmt.Sprint(got) != "[{t1 false out 0} {t2 true a\nb 1}]" {
		t.Errorf("tool results %+v", got)
	}
	if fmt.Sprint(r.ToolNames()) != "[Bash Write]" || !r.Contains(`"tool_use_id":"t2"`) {
		t.Errorf("tool names %v", r.ToolNames())
	}
}

func TestSetEnvAndCLIEnv(t *testing.T) {
	srv := Start(t, nil)
	env := CLIEnv(t, srv, "CLAUDE_CODE_MAX_RETRIES=2", "DISABLE_AUTOUPDATER", "FOO=bar")
	got := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		if _, dup := got[k]; dup {
			t.Errorf("duplicate %s", k)
		}
		got[k] = v
	}
	if got["ANTHROPIC_BASE_URL"] != srv.URL() || got["CLAUDE_CODE_MAX_RETRIES"] != "2" || got["FOO"] != "bar" ||
		got["HOME"] == "" || got["GIT_AUTHOR_EMAIL"] == "" || got["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] != "1" {
		t.Errorf("env %v", got)
	}
	for _, k := range []string{"DISABLE_AUTOUPDATER", "IS_SANDBOX", "CI"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s is set", k)
		}
	}
}

func TestRepoRoot(t *testing.T) {
	wd, _ := os.Getwd()
	root, ok := repoRoot(wd)
	if !ok || filepath.Base(filepath.Dir(wd)) != "internal" || root != filepath.Dir(filepath.Dir(wd)) {
		t.Errorf("repoRoot(%s) = %s, %v", wd, root, ok)
	}
	if _, ok := repoRoot(t.TempDir()); ok {
		t.Error("found a go.mod above a temp dir")
	}
}
