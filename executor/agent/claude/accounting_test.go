package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadence-run/cadence/executor/agent"
	"github.com/cadence-run/cadence/internal/state"
)

// TestProjectDirName checks the name against the CLI's own function, run
// with node on the same paths (the expected values are its output; see
// ProjectDirName for the function).
func TestProjectDirName(t *testing.T) {
	head := func(s string, n int) string { return s[:n] }
	for _, tc := range []struct{ cwd, want string }{
		{"/home/me/my.proj", "-home-me-my-proj"},
		{"/home/me/my_proj", "-home-me-my-proj"},
		{"/srv/me@host/repo", "-srv-me-host-repo"},
		{"/tmp/with space/x", "-tmp-with-space-x"},
		{"/a/.hidden/b.c", "-a--hidden-b-c"},
		{"/home/josé/café", "-home-jos--caf-"},
		{"/home/jose\u0301", "-home-jose-"}, // decomposed: not normalised
		{"/w/emoji😀x", "-w-emoji--x"},       // two UTF-16 code units
		{"/w/日本語", "-w----"},
		{"/home/me/proj-1.2/wt/L-3_x", "-home-me-proj-1-2-wt-L-3-x"},
		{"/", "-"},
		{"/w/" + strings.Repeat("a", 197), "-w-" + strings.Repeat("a", 197)}, // 200: no hash
		{"/w/" + strings.Repeat("abcdefghij", 30), head("-w-"+strings.Repeat("abcdefghij", 30), 200) + "-3nm78d"},
		{"/w/" + strings.Repeat("é", 250), "-w-" + strings.Repeat("-", 197) + "-blrp47"},
		{"/w/😀" + strings.Repeat("b", 300), "-w---" + strings.Repeat("b", 195) + "-sqzu3u"},
		{"/" + strings.Repeat("z", 2000), "-" + strings.Repeat("z", 199) + "-t9k3lb"},
		// seen from the real CLI 2.1.328 (TestTranscriptPathRealCLI's kind of path)
		{"/tmp/TestZZExp2795320175/001/" + strings.Repeat("abcdefghij", 12) + "/" + strings.Repeat("klmnopqrst_", 10),
			head("-tmp-TestZZExp2795320175-001-"+strings.Repeat("abcdefghij", 12)+"-"+strings.Repeat("klmnopqrst-", 10), 200) + "-1tmtg7"},
	} {
		if got := ProjectDirName(tc.cwd); got != tc.want {
			t.Errorf("ProjectDirName(%q)\n got %q\nwant %q", tc.cwd, got, tc.want)
		}
	}
}

func TestTranscriptPathEnv(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.d")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	slug := ProjectDirName(real)
	for _, tc := range []struct {
		name string
		env  []string
		cwd  string
		want string
	}{
		{"home", []string{"HOME=/h"}, real, "/h/.claude/projects/" + slug + "/s.jsonl"},
		{"symlink resolved", []string{"HOME=/h"}, link, "/h/.claude/projects/" + slug + "/s.jsonl"},
		{"config dir", []string{"HOME=/h", "CLAUDE_CONFIG_DIR=/cfg"}, real, "/cfg/projects/" + slug + "/s.jsonl"},
		{"last value wins", []string{"CLAUDE_CONFIG_DIR=/old", "HOME=/h", "CLAUDE_CONFIG_DIR=/cfg"}, real, "/cfg/projects/" + slug + "/s.jsonl"},
		{"empty config dir is relative", []string{"HOME=/h", "CLAUDE_CONFIG_DIR="}, real, real + "/projects/" + slug + "/s.jsonl"},
		{"project name with config dir", []string{"HOME=/h", "CLAUDE_CONFIG_DIR=/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME=my_proj-1"}, real, "/cfg/projects/my_proj-1/s.jsonl"},
		{"project name ignored without config dir", []string{"HOME=/h", "CLAUDE_CODE_PROJECT_DIR_NAME=my_proj"}, real, "/h/.claude/projects/" + slug + "/s.jsonl"},
		{"invalid project name", []string{"CLAUDE_CONFIG_DIR=/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME=a.b"}, real, "/cfg/projects/" + slug + "/s.jsonl"},
		{"device project name", []string{"CLAUDE_CONFIG_DIR=/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME=NUL"}, real, "/cfg/projects/" + slug + "/s.jsonl"},
	} {
		if got := TranscriptPath(tc.env, tc.cwd, "s"); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestPrices: the table agrees with the CLI's own costs (the reference's
// "100 in + 20 out = $0.0008 on opus, $0.0004 on sonnet", what the CLI
// reports against the fake API), and model names find their entries.
func TestPrices(t *testing.T) {
	u := state.Usage{Input: 100, Output: 20}
	for _, tc := range []struct {
		model string
		u     state.Usage
		want  float64
	}{
		{"claude-opus-5-5", u, 800},
		{"claude-sonnet-5-5", u, 400},
		{"claude-haiku-5-5", u, 20},
		{"claude-fable-5-2", u, 1600},
		{"claude-opus-4-5-20251101", u, 1000},
		{"claude-sonnet-4-5[1m]", u, 600},
		{"us.anthropic.claude-haiku-4-5-20251001-v1:0", u, 200},
		{"claude-haiku-4-5@20251001", u, 200},
		{"claude-opus-4-1", u, 3000},
		{"some-other-model", u, 1000}, // the CLI's default tier, 5/25
		{"claude-opus-5-5", state.Usage{CacheWrite: 1000, CacheRead: 1000}, 5000 + 200},
		{"claude-haiku-5-5", state.Usage{Input: 100_001, Output: 10}, 100_001*0.5 + 25}, // long prompt
		{"claude-haiku-5-5", state.Usage{Input: 100_000, Output: 10}, 100_000*0.1 + 5},
	} {
		if got := Price(tc.model).Micros(tc.u); got != tc.want {
			t.Errorf("%s %+v: %v µ$, want %v", tc.model, tc.u, got, tc.want)
		}
	}
}

// TestStreamAndTranscriptMerge: every turn counted once, by message id,
// whatever reported it: the stream's message_start alone (the turn in
// flight when the session was killed), the stream's assistant lines and
// message_delta, the transcript's final usage.
func TestStreamAndTranscriptMerge(t *testing.T) {
	stream := strings.Join([]string{
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","model":"claude-opus-5-5","usage":{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":5}}},"api_message_id":"m1"}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}},"api_message_id":"m1"}`,
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":5}}}`,
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":5}}}`,
		`{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":20}},"api_message_id":"m1"}`,
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m2","model":"claude-opus-5-5","usage":{"input_tokens":300,"output_tokens":1,"cache_creation_input_tokens":10,"cache_read_input_tokens":0}}},"api_message_id":"m2"}`,
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m3","model":"claude-opus-5-5","usage":{"input_tokens":500,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}},"api_message_id":"m3"}`,
	}, "\n")
	var log strings.Builder
	w := newStreamWatch(nil, nil)
	w.consume(strings.NewReader(stream), &log)
	if strings.Contains(log.String(), "content_block_delta") || strings.Count(log.String(), "\n") != 6 {
		t.Errorf("log keeps the content deltas, or loses lines:\n%s", log.String())
	}
	if got := w.total(); got != (state.Usage{Input: 900, CacheWrite: 10, CacheRead: 5, Output: 22}) {
		t.Errorf("stream total %+v", got)
	}
	// The transcript has m1 and m2 complete; m3 was in flight.
	dir := t.TempDir()
	p := filepath.Join(dir, "t.jsonl")
	os.WriteFile(p, []byte(strings.Join([]string{
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":20}}}`,
		`{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":20}}}`,
		`{"type":"assistant","message":{"id":"m2","model":"claude-opus-5-5","usage":{"input_tokens":300,"cache_creation_input_tokens":10,"cache_read_input_tokens":0,"output_tokens":40}}}`,
		`{"type":"assistant","message":{"id":"m9","model":"<synthetic>","usage":{"input_tokens":999,"output_tokens":9}}}`,
	}, "\n")), 0o644)
	tr, ok := transcriptTurns(p)
	if !ok {
		t.Fatal("no turns in the transcript")
	}
	all := w.seen()
	all.merge(tr)
	want := state.Usage{Input: 900, CacheWrite: 10, CacheRead: 5, Output: 61}
	if got := all.total(); got != want {
		t.Errorf("merged %+v, want %+v", got, want)
	}
	// Merging again changes nothing: each turn is counted once.
	all.merge(tr)
	all.merge(w.seen())
	if got := all.total(); got != want {
		t.Errorf("merged twice %+v, want %+v", got, want)
	}
	// opus 5.5: 4 in, 20 out, 5 cache write, 0.2 cache read per million.
	if got, want := all.costMicros(), int64(900*4+61*20+10*5+5*0.2); got != want {
		t.Errorf("cost %d µ$, want %d", got, want)
	}
}

// TestRecount: a session stopped with its cadence is counted from its log
// and its transcript, each turn once; a result line in the log is the
// CLI's own count.
func TestRecount(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home}
	prefix := filepath.Join(t.TempDir(), "implement")
	os.WriteFile(prefix+".json", []byte(strings.Join([]string{
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":1}}},"api_message_id":"m1"}`,
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m2","model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":1}}},"api_message_id":"m2"}`,
	}, "\n")), 0o644)
	p := TranscriptPath(env, dir, "sess")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-5-5","usage":{"input_tokens":100,"output_tokens":20}}}`+"\n"), 0o644)
	got, ok := New().Recount("sess", dir, prefix, env)
	want := agent.Spent{Usage: state.Usage{Input: 200, Output: 21}, CostMicros: 200*2 + 21*10, CostEstimated: true}
	if !ok || got != want {
		t.Errorf("Recount = %+v %v, want %+v", got, ok, want)
	}
	if _, ok := New().Recount("other", dir, filepath.Join(dir, "none"), env); ok {
		t.Error("Recount found a session that left nothing")
	}
	os.WriteFile(prefix+".json", []byte(okImplement+"\n"), 0o644)
	got, ok = New().Recount("sess", dir, prefix, env)
	if !ok || got.CostEstimated || got.CostMicros != 1600 || got.Usage.Counted() != 250 {
		t.Errorf("Recount with a result line = %+v %v", got, ok)
	}
}
